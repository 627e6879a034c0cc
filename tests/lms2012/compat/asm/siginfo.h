/* Stand-in for the kernel header <asm/siginfo.h>: everything lives in compat.h. */
#include "../compat.h"
