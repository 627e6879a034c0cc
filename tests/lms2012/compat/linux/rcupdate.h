/* Stand-in for the kernel header <linux/rcupdate.h>: everything lives in compat.h. */
#include "../compat.h"
