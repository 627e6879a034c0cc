/* Stand-in for the kernel header <linux/miscdevice.h>: everything lives in compat.h. */
#include "../compat.h"
