// A pipe read by several VNODEs (docs/language.md, "Several readers"): under split(duplicate) every
// reader VNODE (and each of its replicas) gets every message, as StreamIt's duplicate splitter to
// different filters; under split(rr(...)) the stream is dealt across them in source order, their
// replicas numbered one after another. And a splitter and joiner that take a whole PIPE_ARRAY as one
// port (`OUT(bands)`, `IN(filtered)`). Each program is built with the real disparcc and run one rank per
// instance, all in one rank, and on two ranks; its sums are compared with the values computed here.
#include "GroupedRuns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dispar::testing {
namespace {

TEST(SharedPipes, ADuplicatedPipeFeedsDifferentFiltersAndAFamily) {
  // input feeds `scale` (2 replicas: each gets every message), `offset`, and the three members of
  // `band`; each writes what it computed to its own pipe, the sink sums each.
  constexpr long kCount = 500;
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr long kCount = 500;
PIPE(long, input);
PIPE(long, scaled);
PIPE(long, offsets);
PIPE_ARRAY(long, bands, 3);
#pragma streamap communication(input) split(duplicate)
// The sink reads one pipe to its end before the next: the others hold all their messages meanwhile.
#pragma streamap communication(offsets) window(1024)
#pragma streamap communication(bands) window(1024)
VNODE(source, OUT(input)) { for (long i = 0; i < kCount; ++i) input.write(i); }
#pragma streamap resource(cpu) replicas(2)
VNODE(scale, IN(input), OUT(scaled)) { long x; while (input.read(x)) scaled.write(3 * x); }
VNODE(offset, IN(input), OUT(offsets)) { long x; while (input.read(x)) offsets.write(x + 7); }
VNODE_ARRAY(band, 3, i, IN(input), OUT(bands[i])) { long x; while (input.read(x)) bands[i].write(x * (i + 1)); }
VNODE(sink, IN(scaled), IN(offsets), IN(bands[0]), IN(bands[1]), IN(bands[2])) {
  long x, s = 0, o = 0, b[3] = {0, 0, 0};
  while (scaled.read(x)) s += x;
  while (offsets.read(x)) o += x;
  for (int k = 0; k < 3; ++k) while (bands[k].read(x)) b[k] += x;
  std::printf("scaled=%ld offsets=%ld bands=%ld,%ld,%ld\n", s, o, b[0], b[1], b[2]);
}
)",
                                       program));
  long sum = 0;
  for (long i = 0; i < kCount; ++i) sum += i;
  // Both replicas of `scale` see every message; the sink merges their outputs.
  expectEveryGroupingPrints(program, "scaled=" + std::to_string(2 * 3 * sum) + " offsets=" +
                                         std::to_string(sum + 7 * kCount) + " bands=" + std::to_string(sum) + "," +
                                         std::to_string(2 * sum) + "," + std::to_string(3 * sum) + "\n");
}

TEST(SharedPipes, AWeightedRoundRobinDealsAcrossDifferentFilters) {
  // split(rr(2, 1, 1)) over `left` (1 replica) and `right` (2 replicas): message n goes to left when
  // n mod 4 is 0 or 1, to right's replica 0 when it is 2, to its replica 1 when it is 3.
  constexpr long kCount = 1001;
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <cstdio>
PIPE(long, input);
PIPE(long, fromLeft);
PIPE(long, fromRight);
#pragma streamap communication(input) split(rr(2, 1, 1))
#pragma streamap communication(fromRight) window(1024)  // held while the sink reads fromLeft to its end
VNODE(source, OUT(input)) { for (long i = 0; i < 1001; ++i) input.write(i); }
VNODE(left, IN(input), OUT(fromLeft)) { long x; while (input.read(x)) fromLeft.write(x); }
#pragma streamap resource(cpu) replicas(2)
VNODE(right, IN(input), OUT(fromRight)) {
  long x;
  while (input.read(x)) fromRight.write(1000000 * (dispar::replica() + 1) + x);
}
VNODE(sink, IN(fromLeft), IN(fromRight)) {
  long x, l = 0, r0 = 0, r1 = 0, n = 0;
  while (fromLeft.read(x)) { l += x; ++n; }
  while (fromRight.read(x)) { (x >= 2000000 ? r1 : r0) += x % 1000000; ++n; }
  std::printf("messages=%ld left=%ld right0=%ld right1=%ld\n", n, l, r0, r1);
}
)",
                                       program));
  long left = 0, right0 = 0, right1 = 0;
  for (long n = 0; n < kCount; ++n) (n % 4 < 2 ? left : n % 4 == 2 ? right0 : right1) += n;
  expectEveryGroupingPrints(program, "messages=" + std::to_string(kCount) + " left=" + std::to_string(left) +
                                         " right0=" + std::to_string(right0) + " right1=" + std::to_string(right1) +
                                         "\n");
}

TEST(SharedPipes, ASplitJoinOverWholePipeArrays) {
  // The splitter writes every element of `bands` (OUT(bands)), the joiner reads every element of
  // `filtered` (IN(filtered)): each a port on all of the array's elements, used as bands[k].
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr int kBands = 3;
PIPE(int, input);
PIPE_ARRAY(int, bands, kBands);
PIPE_ARRAY(long, filtered, kBands);
PIPE(long, output);
VNODE(source, OUT(input)) { for (int i = 0; i < 100; ++i) input.write(i); }
VNODE(splitter, IN(input), OUT(bands)) {
  int x;
  while (input.read(x)) for (int k = 0; k < kBands; ++k) bands[k].write(x);
}
VNODE_ARRAY(filter, kBands, i, IN(bands[i]), OUT(filtered[i])) {
  int x;
  while (bands[i].read(x)) filtered[i].write(long(x) * (i + 1));
}
VNODE(joiner, IN(filtered), OUT(output)) {
  long x, sum;
  for (bool more = true; more;) {
    sum = 0;
    for (int k = 0; k < kBands; ++k) more = filtered[k].read(x) && (sum += x, true);
    if (more) output.write(sum);
  }
}
VNODE(sink, IN(output)) {
  long x, total = 0, n = 0;
  while (output.read(x)) { total += x; ++n; }
  std::printf("sums=%ld total=%ld\n", n, total);
}
)",
                                       program));
  long total = 0;
  for (long i = 0; i < 100; ++i) total += i * (1 + 2 + 3);
  expectEveryGroupingPrints(program, "sums=100 total=" + std::to_string(total) + "\n");
}

}  // namespace
}  // namespace dispar::testing
