/* Stand-in for the kernel header <asm/gpio.h>: everything lives in compat.h. */
#include "../compat.h"
