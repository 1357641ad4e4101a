#include "streammap/SignalReader.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace dispar::streammap {

SignalReader::SignalReader(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (::pthread_sigmask(SIG_BLOCK, &set, &previous_) != 0) {
    error_ = std::string("cannot block signals: ") + std::strerror(errno);
    return;
  }
  blocked_ = true;
  fd_ = FileDescriptor(::signalfd(-1, &set, SFD_CLOEXEC));
  if (fd_.get() < 0) error_ = std::string("signalfd: ") + std::strerror(errno);
}

SignalReader::~SignalReader() {
  if (blocked_) ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

int SignalReader::wait(int milliseconds) {
  pollfd p = {fd_.get(), POLLIN, 0};
  if (::poll(&p, 1, milliseconds) <= 0) return 0;
  signalfd_siginfo info{};
  if (::read(fd_.get(), &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return 0;
  return static_cast<int>(info.ssi_signo);
}

}  // namespace dispar::streammap
