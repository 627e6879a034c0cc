/* Stand-in for the kernel header <linux/kernel.h>: everything lives in compat.h. */
#include "../compat.h"
