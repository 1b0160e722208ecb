/* ceiling_method: being written (issue 30). */
#include "ceiling_method.h"
