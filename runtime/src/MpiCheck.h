// One checked-call macro for every MPI call of the runtime, and the exceptions the runtime throws.
#ifndef DISPAR_RUNTIME_MPICHECK_H
#define DISPAR_RUNTIME_MPICHECK_H

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace dispar::rt {

/// A misuse of a pipe or a malformed message: the text names the pipe and what is wrong.
class PipeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An MPI call that did not return MPI_SUCCESS.
class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "MPI_Send failed at Ports.cpp:42: <MPI_Error_string>".
std::string describeMpiFailure(int code, const char* call, const char* file, int line);
[[noreturn]] void throwMpiFailure(int code, const char* call, const char* file, int line);

inline void checkMpi(int code, const char* call, const char* file, int line) {
  if (code != MPI_SUCCESS) throwMpiFailure(code, call, file, line);
}

}  // namespace dispar::rt

/// DISPAR_MPI(MPI_Send, buf, n, ...): calls MPI_Send(buf, n, ...) and throws MpiError naming the call,
/// the file, the line and MPI's own error text when it fails (communicators use MPI_ERRORS_RETURN).
#define DISPAR_MPI(function, ...) ::dispar::rt::checkMpi(function(__VA_ARGS__), #function, __FILE__, __LINE__)

#endif  // DISPAR_RUNTIME_MPICHECK_H
