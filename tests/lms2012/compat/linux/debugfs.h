/* Stand-in for the kernel header <linux/debugfs.h>: everything lives in compat.h. */
#include "../compat.h"
