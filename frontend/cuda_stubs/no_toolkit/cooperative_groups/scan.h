// Stand-in for the CUDA toolkit's cooperative_groups/scan.h while the frontend parses without a toolkit.
#include "../cooperative_groups.h"
