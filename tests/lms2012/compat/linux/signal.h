/* Stand-in for the kernel header <linux/signal.h>: everything lives in compat.h. */
#include "../compat.h"
