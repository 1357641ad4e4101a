// RAII owners of MPI handles: a communicator is freed and a request completed when its owner goes.
#ifndef DISPAR_RUNTIME_MPIHANDLES_H
#define DISPAR_RUNTIME_MPIHANDLES_H

#include "MpiCheck.h"

#include <utility>

namespace dispar::rt {

/// A communicator with MPI_ERRORS_RETURN, freed on destruction.
class Communicator {
 public:
  Communicator() = default;
  /// A communicator of exactly `first` (its rank 0) and `second` (rank 1) of `parent`. Collective over
  /// those two only (MPI_Comm_create_group): both must make their pairs in the same order.
  static Communicator ofPair(MPI_Comm parent, int first, int second);
  ~Communicator();
  Communicator(Communicator&& other) noexcept : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// A non-blocking operation; waited for on destruction so a buffer never outlives its transfer.
class Request {
 public:
  Request() = default;
  ~Request();
  Request(Request&& other) noexcept : request_(std::exchange(other.request_, MPI_REQUEST_NULL)) {}
  Request& operator=(Request&& other) = delete;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  /// Where MPI_Isend and friends store the new request; the previous one must be complete.
  MPI_Request* slot() { return &request_; }
  bool active() const { return request_ != MPI_REQUEST_NULL; }
  void wait();
  /// Whether it is complete (MPI_Test); true when there is none.
  bool test();

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_MPIHANDLES_H
