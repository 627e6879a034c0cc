/* Stand-in for the kernel header <linux/hrtimer.h>: everything lives in compat.h. */
#include "../compat.h"
