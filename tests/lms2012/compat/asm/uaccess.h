/* Stand-in for the kernel header <asm/uaccess.h>: everything lives in compat.h. */
#include "../compat.h"
