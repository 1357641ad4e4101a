// A hand-written SMPI program for tests/e2e/SimulationTest.cpp (Simulate.AProbingReaderGetsItsMessageOnTime):
// rank 0 computes for 2 ms of simulated time (smpi_execute_benched: no measured burst, so the run is
// deterministic), then sends every other rank the simulated time of that send. They wait for it as the
// runtime's readers wait for a link's first message on the SMPI target, in MPI_Probe (which SMPI runs
// as a loop of MPI_Iprobe), then MPI_Recv it, and print how late after its send it arrived.
#include <mpi.h>
#include <smpi/smpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    smpi_execute_benched(0.002);
    for (int to = 1; to < size; ++to) {
      const double sentAt = MPI_Wtime();
      MPI_Send(&sentAt, 1, MPI_DOUBLE, to, 0, MPI_COMM_WORLD);
    }
  } else {
    MPI_Status status;
    MPI_Probe(0, 0, MPI_COMM_WORLD, &status);
    double sentAt = 0;
    MPI_Recv(&sentAt, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::printf("rank %d received its message %.1f us after its send\n", rank, (MPI_Wtime() - sentAt) * 1e6);
  }
  MPI_Finalize();
  return 0;
}
