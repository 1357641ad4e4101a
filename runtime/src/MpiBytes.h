// Point-to-point calls for byte messages of any size, on MPI-4 libraries (MPICH 4: the large-count
// `_c` functions) and on MPI-3 ones (Open MPI 4.1: int counts). Every call of the runtime that moves
// bytes goes through here, so that one build of the runtime source serves both.
#ifndef DISPAR_RUNTIME_MPIBYTES_H
#define DISPAR_RUNTIME_MPIBYTES_H

#include <mpi.h>

#include <cstddef>

namespace dispar::rt::mpi {

/// A message matched by a probe, received later by mrecvBytes. With MPI's matched probes (MPI_Mprobe),
/// the MPI_Message itself. SMPI 3.32 implements none of them (docs/simulation.md): there it is the probed
/// source, tag and communicator, received by MPI_Recv of exactly those. That receives the probed message
/// because MPI does not overtake messages of one source, tag and communicator, and because SMPI runs a
/// rank's calls on one thread (the runtime runs no rank groups there), so nothing else receives between.
#ifdef DISPAR_TARGET_SMPI
struct Message {
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
  MPI_Comm comm = MPI_COMM_NULL;
};
#else
using Message = MPI_Message;
#endif

/// MPI_Mprobe / MPI_Improbe; MPI error codes as returned.
int mprobe(int source, int tag, MPI_Comm comm, Message* message, MPI_Status* status);
int improbe(int source, int tag, MPI_Comm comm, int* found, Message* message, MPI_Status* status);

/// MPI_Send / MPI_Recv / MPI_Mrecv / MPI_Isend / MPI_Irecv of `bytes` bytes; MPI error codes as returned.
int sendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm);
int recvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Status* status);
int mrecvBytes(void* buffer, MPI_Count bytes, Message* message, MPI_Status* status);
int isendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm, MPI_Request* request);
int irecvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Request* request);
/// The byte length of a received or probed message.
int receivedBytes(const MPI_Status* status, MPI_Count* bytes);

/// `bytes` bytes as (count, datatype) for MPI-3's int counts: MPI_BYTE up to INT_MAX, beyond it one
/// element of a committed derived type of 1 GiB blocks plus the rest (the technique of BigMPI, Hammond
/// et al., "To INT_MAX... and beyond!", ExaMPI 2014). Frees the type it made. Used by the MPI-3 path;
/// compiled on every MPI so that it is tested everywhere.
class ByteRun {
 public:
  explicit ByteRun(MPI_Count bytes);
  ~ByteRun();
  ByteRun(const ByteRun&) = delete;
  ByteRun& operator=(const ByteRun&) = delete;

  /// MPI_SUCCESS, or the code of the failed type construction (count() and type() are then unusable).
  int status() const { return status_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

  static constexpr MPI_Count kBlockBytes = MPI_Count{1} << 30;

 private:
  int status_ = MPI_SUCCESS;
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  bool owned_ = false;
};

}  // namespace dispar::rt::mpi

#endif  // DISPAR_RUNTIME_MPIBYTES_H
