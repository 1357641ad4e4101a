#include "MpiBytes.h"

#include <climits>

namespace dispar::rt::mpi {

ByteRun::ByteRun(MPI_Count bytes) {
  if (bytes <= INT_MAX) {
    count_ = static_cast<int>(bytes);
    return;
  }
  const MPI_Count blocks = bytes / kBlockBytes;
  const MPI_Count rest = bytes % kBlockBytes;
  MPI_Datatype block = MPI_DATATYPE_NULL;
  status_ = MPI_Type_contiguous(static_cast<int>(kBlockBytes), MPI_BYTE, &block);
  if (status_ != MPI_SUCCESS) return;
  if (rest == 0) {
    status_ = MPI_Type_contiguous(static_cast<int>(blocks), block, &type_);
  } else {
    int lengths[2] = {static_cast<int>(blocks), static_cast<int>(rest)};
    MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(blocks * kBlockBytes)};
    MPI_Datatype types[2] = {block, MPI_BYTE};
    status_ = MPI_Type_create_struct(2, lengths, displacements, types, &type_);
  }
  MPI_Type_free(&block);
  if (status_ == MPI_SUCCESS) status_ = MPI_Type_commit(&type_);
  owned_ = status_ == MPI_SUCCESS;
  count_ = 1;
}

ByteRun::~ByteRun() {
  // Communication still using the type completes normally after MPI_Type_free (MPI 3.1, 4.1.10).
  if (owned_) MPI_Type_free(&type_);
}

#ifdef DISPAR_TARGET_SMPI

int mprobe(int source, int tag, MPI_Comm comm, Message* message, MPI_Status* status) {
  const int code = MPI_Probe(source, tag, comm, status);
  if (code == MPI_SUCCESS) *message = Message{status->MPI_SOURCE, status->MPI_TAG, comm};
  return code;
}
int improbe(int source, int tag, MPI_Comm comm, int* found, Message* message, MPI_Status* status) {
  const int code = MPI_Iprobe(source, tag, comm, found, status);
  if (code == MPI_SUCCESS && *found) *message = Message{status->MPI_SOURCE, status->MPI_TAG, comm};
  return code;
}
int mrecvBytes(void* buffer, MPI_Count bytes, Message* message, MPI_Status* status) {
  return recvBytes(buffer, bytes, message->source, message->tag, message->comm, status);
}

#else

int mprobe(int source, int tag, MPI_Comm comm, Message* message, MPI_Status* status) {
  return MPI_Mprobe(source, tag, comm, message, status);
}
int improbe(int source, int tag, MPI_Comm comm, int* found, Message* message, MPI_Status* status) {
  return MPI_Improbe(source, tag, comm, found, message, status);
}

#endif

#if MPI_VERSION >= 4

int sendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm) {
  return MPI_Send_c(buffer, bytes, MPI_BYTE, dest, tag, comm);
}
int recvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return MPI_Recv_c(buffer, bytes, MPI_BYTE, source, tag, comm, status);
}
int mrecvBytes(void* buffer, MPI_Count bytes, Message* message, MPI_Status* status) {
  return MPI_Mrecv_c(buffer, bytes, MPI_BYTE, message, status);
}
int isendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return MPI_Isend_c(buffer, bytes, MPI_BYTE, dest, tag, comm, request);
}
int irecvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return MPI_Irecv_c(buffer, bytes, MPI_BYTE, source, tag, comm, request);
}
int receivedBytes(const MPI_Status* status, MPI_Count* bytes) { return MPI_Get_count_c(status, MPI_BYTE, bytes); }

#else  // MPI-3: int counts, ByteRun beyond INT_MAX

int sendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm) {
  const ByteRun run(bytes);
  if (run.status() != MPI_SUCCESS) return run.status();
  return MPI_Send(buffer, run.count(), run.type(), dest, tag, comm);
}
int recvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const ByteRun run(bytes);
  if (run.status() != MPI_SUCCESS) return run.status();
  return MPI_Recv(buffer, run.count(), run.type(), source, tag, comm, status);
}
#ifndef DISPAR_TARGET_SMPI
int mrecvBytes(void* buffer, MPI_Count bytes, Message* message, MPI_Status* status) {
  const ByteRun run(bytes);
  if (run.status() != MPI_SUCCESS) return run.status();
  return MPI_Mrecv(buffer, run.count(), run.type(), message, status);
}
#endif
int isendBytes(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const ByteRun run(bytes);
  if (run.status() != MPI_SUCCESS) return run.status();
  return MPI_Isend(buffer, run.count(), run.type(), dest, tag, comm, request);
}
int irecvBytes(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  const ByteRun run(bytes);
  if (run.status() != MPI_SUCCESS) return run.status();
  return MPI_Irecv(buffer, run.count(), run.type(), source, tag, comm, request);
}
#ifdef DISPAR_TARGET_SMPI
// SMPI 3.32 has no MPI_Get_elements_x: an int count, so simulated messages stay below 2 GiB.
int receivedBytes(const MPI_Status* status, MPI_Count* bytes) {
  int count = 0;
  const int code = MPI_Get_count(status, MPI_BYTE, &count);
  *bytes = count;
  return code;
}
#else
// Counts basic elements whatever type the message was received with: bytes, even beyond INT_MAX.
int receivedBytes(const MPI_Status* status, MPI_Count* bytes) { return MPI_Get_elements_x(status, MPI_BYTE, bytes); }
#endif

#endif

}  // namespace dispar::rt::mpi
