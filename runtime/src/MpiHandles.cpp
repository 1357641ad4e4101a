#include "MpiHandles.h"

#include "Profile.h"

#include <cstring>

namespace dispar::rt {

std::string describeMpiFailure(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::strcpy(text, "unknown MPI error");
  const char* slash = std::strrchr(file, '/');
  std::string message = std::string(call) + " failed at " + (slash ? slash + 1 : file) + ":" + std::to_string(line) +
                        ": " + std::string(text, static_cast<std::size_t>(length));
  // MPICH appends an error stack after a newline; keep the whole text on one line.
  for (char& c : message)
    if (c == '\n') c = ' ';
  return message;
}

void throwMpiFailure(int code, const char* call, const char* file, int line) {
  throw MpiError(describeMpiFailure(code, call, file, line));
}

Communicator Communicator::ofPair(MPI_Comm parent, int first, int second) {
  MPI_Group parentGroup = MPI_GROUP_NULL;
  MPI_Group pair = MPI_GROUP_NULL;
  DISPAR_MPI(MPI_Comm_group, parent, &parentGroup);
  const int members[2] = {first, second};
  const int included = MPI_Group_incl(parentGroup, 2, members, &pair);
  MPI_Group_free(&parentGroup);
  checkMpi(included, "MPI_Group_incl", __FILE__, __LINE__);
  Communicator result;
  const int created = MPI_Comm_create_group(parent, pair, 0, &result.comm_);
  MPI_Group_free(&pair);
  checkMpi(created, "MPI_Comm_create_group", __FILE__, __LINE__);
  DISPAR_MPI(MPI_Comm_set_errhandler, result.comm_, MPI_ERRORS_RETURN);
  return result;
}

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

Request::~Request() {
  // Errors cannot be reported from a destructor; the checked path is wait().
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

void Request::wait() {
  if (request_ == MPI_REQUEST_NULL) return;
#ifndef DISPAR_TARGET_SMPI  // a test costs simulated time there, and profiles measure no CPU time
  int done = 0;
  DISPAR_MPI(MPI_Test, &request_, &done, MPI_STATUS_IGNORE);
  if (done != 0) return;
  noteWait();
#endif
  DISPAR_MPI(MPI_Wait, &request_, MPI_STATUS_IGNORE);
}

bool Request::test() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  DISPAR_MPI(MPI_Test, &request_, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

}  // namespace dispar::rt
