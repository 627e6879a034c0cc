/* Stand-in for the kernel header <linux/module.h>: everything lives in compat.h. */
#include "../compat.h"
