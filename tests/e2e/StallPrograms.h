// Deadlocking programs the stall tests run under every launcher (tests/e2e/StallTest.cpp with mpiexec,
// tests/slurm/SlurmClusterTest.cpp with srun), and what the stall report says of them.
#ifndef DISPAR_TESTS_E2E_STALL_PROGRAMS_H
#define DISPAR_TESTS_E2E_STALL_PROGRAMS_H

namespace dispar::testing {

/// A split-join read in the wrong order: join reads all of `a` before `b`, and split blocks on `b`'s full
/// window long before `a` ends.
inline constexpr const char* kSplitJoinReadInTheWrongOrder = R"(#include <dispar/dispar.h>
#include <cstdio>
PIPE(int, a);
PIPE(int, b);
#pragma streamap communication(a) window(4)
#pragma streamap communication(b) window(4)
VNODE(split, OUT(a), OUT(b)) { for (int i = 0; i < 100; ++i) { a.write(i); b.write(i); } }
VNODE(join, IN(a), IN(b)) {
  long sum = 0;
  int v;
  while (a.read(v)) sum += v;  // all of a first: split is blocked on b long before a ends
  while (b.read(v)) sum += v;
  std::printf("sum=%ld\n", sum);
}
)";

/// The cycle line of its stall report.
inline constexpr const char* kSplitJoinCycle =
    "dispar: cycle: vnode 'split' (replica 0) waits to write 'b' read by vnode 'join' (replica 0), which reads "
    "'a' from vnode 'split' (replica 0)\n";

}  // namespace dispar::testing

#endif
