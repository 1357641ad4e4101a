#include "MpiTest.h"

#include <mpi.h>

#include <cstdio>
#include <memory>

namespace {
std::uint64_t probes = 0;
}  // namespace

// Replaces MPICH's MPI_Mprobe and MPI_Improbe (weak symbols) for this executable; the runtime is linked in
// statically. Counts the probe rounds that found a message: a reader waiting patiently polls with
// MPI_Improbe, which finds the message once.
extern "C" int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  ++probes;
  return PMPI_Mprobe(source, tag, comm, message, status);
}
extern "C" int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  const int code = PMPI_Improbe(source, tag, comm, flag, message, status);
  if (code == MPI_SUCCESS && *flag) ++probes;
  return code;
}

namespace dispar::test {

std::uint64_t probeCount() { return probes; }

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int runProgram(const rt::ProgramSpec& program, rt::DispatchFn dispatch, const std::vector<std::string>& args) {
  return runProgram(program, dispatch, rt::RunOptions{}, args);
}

int runProgram(const rt::ProgramSpec& program, rt::DispatchFn dispatch, const rt::RunOptions& options,
               const std::vector<std::string>& args) {
  std::vector<std::string> storage{"test"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return rt::run(static_cast<int>(storage.size()), argv.data(), program, dispatch, options);
}

void MpiTest::TearDown() {
  const int failed = HasFailure() ? 1 : 0;
  std::vector<int> failures(static_cast<std::size_t>(worldSize()));
  MPI_Allgather(&failed, 1, MPI_INT, failures.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string others;
  for (std::size_t r = 0; r < failures.size(); ++r)
    if (failures[r] && static_cast<int>(r) != worldRank()) others += (others.empty() ? "" : ", ") + std::to_string(r);
  if (!others.empty()) ADD_FAILURE() << "failed on rank(s) " << others << " (their messages are on stderr)";
}

namespace {

/// Prints the failed assertions of a rank other than 0, whose default printer is removed.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace dispar::test

int main(int argc, char** argv) {
  // Grouped programs run several instances of a rank on threads that call MPI.
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = dispar::test::worldRank();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new dispar::test::RankFailurePrinter(rank));
  }
  const int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}
