// Stand-in for the CUDA toolkit's cooperative_groups/reduce.h in host-only builds (no toolkit).
#include "../cooperative_groups.h"
