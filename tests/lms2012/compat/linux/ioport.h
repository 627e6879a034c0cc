/* Stand-in for the kernel header <linux/ioport.h>: everything lives in compat.h. */
#include "../compat.h"
