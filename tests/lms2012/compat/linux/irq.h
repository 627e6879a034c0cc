/* Stand-in for the kernel header <linux/irq.h>: everything lives in compat.h. */
#include "../compat.h"
