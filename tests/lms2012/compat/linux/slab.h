/* Stand-in for the kernel header <linux/slab.h>: everything lives in compat.h. */
#include "../compat.h"
