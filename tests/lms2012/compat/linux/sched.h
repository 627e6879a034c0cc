/* Stand-in for the kernel header <linux/sched.h>: everything lives in compat.h. */
#include "../compat.h"
