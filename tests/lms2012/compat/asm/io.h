/* Stand-in for the kernel header <asm/io.h>: everything lives in compat.h. */
#include "../compat.h"
