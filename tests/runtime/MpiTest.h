// A harness for GoogleTest executables launched under mpiexec: every rank runs every test, only rank 0
// prints the usual report (other ranks print their failures to stderr, prefixed with their rank), and
// all ranks agree on each test's outcome. Tests call dispar::rt::run once per program; the harness
// owns MPI_Init/MPI_Finalize so run() can be called many times.
#ifndef DISPAR_TESTS_RUNTIME_MPITEST_H
#define DISPAR_TESTS_RUNTIME_MPITEST_H

#include <dispar/runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dispar::test {

int worldRank();
int worldSize();

/// MPI_Mprobe calls this rank has made so far (counted through the MPI profiling interface), so a
/// test can tell a read that probed from one that received straight away.
std::uint64_t probeCount();

/// Runs a program on every rank as its generated main would, with `args` as argv[1..].
int runProgram(const rt::ProgramSpec& program, rt::DispatchFn dispatch, const std::vector<std::string>& args = {});
/// The same with run options (a grouping of the instances into the job's ranks).
int runProgram(const rt::ProgramSpec& program, rt::DispatchFn dispatch, const rt::RunOptions& options,
               const std::vector<std::string>& args = {});

/// Fixture whose TearDown makes every rank fail a test that failed on any rank.
class MpiTest : public ::testing::Test {
 protected:
  void TearDown() override;
};

}  // namespace dispar::test

#endif  // DISPAR_TESTS_RUNTIME_MPITEST_H
