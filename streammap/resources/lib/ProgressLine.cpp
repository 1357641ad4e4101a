#include "streammap/ProgressLine.h"

#include <unistd.h>

#include <algorithm>

namespace dispar::streammap {

namespace {
constexpr std::chrono::milliseconds kRedrawInterval{100};
}

ProgressLine::ProgressLine(std::string what, std::FILE* stream)
    : ProgressLine(std::move(what), stream, ::isatty(::fileno(stream)) == 1) {}

ProgressLine::ProgressLine(std::string what, std::FILE* stream, bool shown)
    : what_(std::move(what)), stream_(stream), shown_(shown) {}

ProgressLine::~ProgressLine() {
  if (!drawn_) return;
  std::fprintf(stream_, "\r%s\r", std::string(width_, ' ').c_str());
  std::fflush(stream_);
}

void ProgressLine::update(std::size_t done, std::size_t total) {
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - lastDrawn_ < kRedrawInterval) return;
  const std::string line = what_ + ": " + std::to_string(done) + " of " + std::to_string(total);
  // Padded to the previous line's width, so that no character of it is left behind.
  std::fprintf(stream_, "\r%s%s", line.c_str(),
               std::string(width_ > line.size() ? width_ - line.size() : 0, ' ').c_str());
  std::fflush(stream_);
  width_ = std::max(width_, line.size());
  drawn_ = true;
  lastDrawn_ = now;
}

}  // namespace dispar::streammap
