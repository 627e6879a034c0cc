/* Stand-in for the kernel header <linux/types.h>: everything lives in compat.h. */
#include "../compat.h"
