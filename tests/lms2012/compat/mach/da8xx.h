/* Stand-in for the kernel header <mach/da8xx.h>: everything lives in compat.h. */
#include "../compat.h"
