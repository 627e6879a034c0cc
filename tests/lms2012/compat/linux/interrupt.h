/* Stand-in for the kernel header <linux/interrupt.h>: everything lives in compat.h. */
#include "../compat.h"
