// Task Bench's patterns written by hand in MPI: one rank per column, as Task Bench's MPI version does.
// Usage: mpiexec -n W ./taskbench_mpi PATTERN STEPS ITERATIONS
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "taskbench.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, width = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &width);
  const int pattern = argc == 4 ? tb_pattern_named(argv[1]) : -1;
  if (pattern < 0) {
    if (rank == 0) std::fprintf(stderr, "usage: taskbench_mpi PATTERN STEPS ITERATIONS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long steps = std::atol(argv[2]), iterations = std::atol(argv[3]);
  const int i = rank;

  std::vector<int> neighbours;  // every column this one ever exchanges with, either way
  for (int j = 0; j < width; ++j)
    if (j != i && (tb_ever_depends(pattern, width, j, i) || tb_ever_depends(pattern, width, i, j)))
      neighbours.push_back(j);
  std::vector<uint64_t> received(neighbours.size());
  std::vector<MPI_Request> requests;
  requests.reserve(2 * neighbours.size());

  MPI_Barrier(MPI_COMM_WORLD);
  // The wall is from the first rank's start to the last rank's end, on the one clock of this machine, as
  // the other versions measure it (rank 0 alone may leave the barrier after the others have started).
  const double start = tb_now();
  uint64_t previous = 0, sum = 0;
  for (long t = 0; t < steps; ++t) {
    if (!tb_active(pattern, width, i, t)) continue;
    requests.clear();
    for (std::size_t k = 0; k < neighbours.size(); ++k)
      if (tb_depends(pattern, width, neighbours[k], i, t)) {
        requests.emplace_back();
        MPI_Irecv(&received[k], 1, MPI_UINT64_T, neighbours[k], 0, MPI_COMM_WORLD, &requests.back());
      }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    uint64_t inputs = tb_depends(pattern, width, i, i, t) ? tb_input_term(i, previous) : 0;
    for (std::size_t k = 0; k < neighbours.size(); ++k)
      if (tb_depends(pattern, width, neighbours[k], i, t)) inputs += tb_input_term(neighbours[k], received[k]);
    tb_consume(tb_kernel(iterations, static_cast<double>(t)));
    previous = tb_output(i, t, inputs);
    sum += previous;
    if (t + 1 < steps)  // eager sends of 8 bytes: they complete without their receive
      for (int j : neighbours)
        if (tb_depends(pattern, width, i, j, t + 1)) MPI_Send(&previous, 1, MPI_UINT64_T, j, 0, MPI_COMM_WORLD);
  }
  const double end = tb_now();
  double first = 0, last = 0;
  MPI_Reduce(&start, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&end, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  unsigned long long checksum = 0, mine = sum;
  MPI_Reduce(&mine, &checksum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(TB_RESULT_FORMAT, tb_pattern_names[pattern], "mpi", width, steps, tb_tasks(pattern, width, steps),
                iterations, checksum, last - first);
  MPI_Finalize();
  return 0;
}
