// How long one iteration of Task Bench's kernel (taskbench.h) takes on one core here, in nanoseconds:
// the best of 5 runs of 50 million iterations. bench/peers turns iterations into task grains with it.
#include <cstdio>

#include "taskbench.h"

int main() {
  const long iterations = 50000000;
  double best = 1e300;
  for (int run = 0; run < 5; ++run) {
    const double start = tb_now();
    tb_consume(tb_kernel(iterations, run));
    const double seconds = tb_now() - start;
    best = seconds < best ? seconds : best;
  }
  std::printf("%.6f\n", best / static_cast<double>(iterations) * 1e9);
  return 0;
}
