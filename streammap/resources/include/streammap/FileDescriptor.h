// An open POSIX file descriptor, closed on scope exit: the one RAII handle for the files, locks and
// signalfds of the streammap tools.
#ifndef STREAMMAP_FILE_DESCRIPTOR_H
#define STREAMMAP_FILE_DESCRIPTOR_H

#include <unistd.h>

#include <utility>

namespace dispar::streammap {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }

  int get() const { return fd_; }
  /// Closes now, reporting the result (a write's error may only show at close); true when none was open.
  bool close() {
    const int fd = std::exchange(fd_, -1);
    return fd < 0 || ::close(fd) == 0;
  }

 private:
  int fd_;
};

}  // namespace dispar::streammap

#endif
