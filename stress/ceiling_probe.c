/* ceiling_probe: being written (issue 30). */
#include "ceiling_probe.h"
