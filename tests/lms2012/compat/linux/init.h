/* Stand-in for the kernel header <linux/init.h>: everything lives in compat.h. */
#include "../compat.h"
