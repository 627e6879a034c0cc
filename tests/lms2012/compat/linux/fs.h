/* Stand-in for the kernel header <linux/fs.h>: everything lives in compat.h. */
#include "../compat.h"
