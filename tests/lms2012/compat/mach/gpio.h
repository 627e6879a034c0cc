/* Stand-in for the kernel header <mach/gpio.h>: everything lives in compat.h. */
#include "../compat.h"
