/* Stand-in for the kernel header <mach/mux.h>: everything lives in compat.h. */
#include "../compat.h"
