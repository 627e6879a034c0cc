/* Stand-in for the kernel header <linux/mm.h>: everything lives in compat.h. */
#include "../compat.h"
