// What a long operation has done so far, on one terminal line: "importing nodes: 4500 of 20000",
// rewritten in place at most ten times a second and erased when the operation ends, so that the
// command's own output follows on a clean line. Nothing is written when the stream is not a terminal
// (piped, redirected to a file, under a test), where the lines would only be noise.
#ifndef STREAMMAP_PROGRESS_LINE_H
#define STREAMMAP_PROGRESS_LINE_H

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace dispar::streammap {

class ProgressLine {
 public:
  /// Shown when `stream` is a terminal.
  explicit ProgressLine(std::string what, std::FILE* stream = stderr);
  /// Shown or not as given (tests).
  ProgressLine(std::string what, std::FILE* stream, bool shown);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// `done` of `total` items. The first and the last update are always drawn.
  void update(std::size_t done, std::size_t total);

 private:
  std::string what_;
  std::FILE* stream_;
  bool shown_;
  bool drawn_ = false;
  std::size_t width_ = 0;  // of the line drawn last, to erase it
  std::chrono::steady_clock::time_point lastDrawn_;
};

}  // namespace dispar::streammap

#endif
