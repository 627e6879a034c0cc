/* Stand-in for the kernel header <asm/types.h>: everything lives in compat.h. */
#include "../compat.h"
