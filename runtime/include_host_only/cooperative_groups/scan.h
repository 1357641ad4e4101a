// Stand-in for the CUDA toolkit's cooperative_groups/scan.h in host-only builds (no toolkit).
#include "../cooperative_groups.h"
