// Signals read as data: for its lifetime the given signals are blocked in this thread and read from a
// signalfd instead of interrupting whatever runs; the previous mask comes back at the end. The daemon
// waits on it between probes; `streammap run` reads what to pass on to its launcher.
#ifndef STREAMMAP_SIGNAL_READER_H
#define STREAMMAP_SIGNAL_READER_H

#include "streammap/FileDescriptor.h"

#include <csignal>
#include <initializer_list>
#include <string>

namespace dispar::streammap {

class SignalReader {
 public:
  explicit SignalReader(std::initializer_list<int> signals);
  ~SignalReader();
  SignalReader(const SignalReader&) = delete;
  SignalReader& operator=(const SignalReader&) = delete;

  /// Empty when it works; else why not ("signalfd: ...").
  const std::string& error() const { return error_; }
  /// The mask before this reader blocked its signals (what a child should start with).
  const sigset_t& previousMask() const { return previous_; }

  /// Waits up to `milliseconds` (-1: without limit) for one of the signals; returns its number, or 0 on
  /// timeout or interruption.
  int wait(int milliseconds);
  /// The descriptor that becomes readable when a signal is pending, for a caller that polls it with
  /// other descriptors (then wait(0) takes the signal).
  int fd() const { return fd_.get(); }

 private:
  sigset_t previous_{};
  bool blocked_ = false;
  FileDescriptor fd_;
  std::string error_;
};

}  // namespace dispar::streammap

#endif
