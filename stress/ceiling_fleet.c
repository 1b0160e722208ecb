/* ceiling_fleet: being written (issue 30). */
#include "ceiling_fleet.h"
