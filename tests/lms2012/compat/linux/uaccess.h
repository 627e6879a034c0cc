/* Stand-in for the kernel header <linux/uaccess.h>: everything lives in compat.h. */
#include "../compat.h"
