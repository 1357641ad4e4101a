// Run traces (docs/runtime.md, "Run traces"): with DISPAR_TRACE=FILE every instance records its port calls
// (reads, writes), the ends of its messages and its kernel launches in a buffer of its own, bounded by
// DISPAR_TRACE_EVENTS; at the end rank 0 gathers every rank's records, on one clock (each node's offset
// to rank 0's measured at start-up), and writes one Trace Event Format file (dispar_lang/RunTrace.h).
// Without DISPAR_TRACE nothing is recorded: every hook is a null-pointer test.
#ifndef DISPAR_RUNTIME_TRACE_H
#define DISPAR_RUNTIME_TRACE_H

#include <dispar/runtime.h>

#include "Profile.h"
#include "dispar_lang/RunTrace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::rt {

/// DISPAR_TRACE and its bounds, as read once at start-up.
struct TraceSettings {
  std::string path;                   // empty: tracing off
  std::size_t eventsPerInstance = 0;  // DISPAR_TRACE_EVENTS: spans, and message ends, each
  std::uint64_t flowLimit = 0;        // DISPAR_TRACE_FLOWS: messages drawn as arrows before sampling
  static constexpr std::size_t kDefaultEventsPerInstance = 200000;
  static constexpr std::uint64_t kDefaultFlowLimit = 10000;
};

/// Reads DISPAR_TRACE, DISPAR_TRACE_EVENTS and DISPAR_TRACE_FLOWS; nullopt with `error` naming the variable
/// and its value when a bound is not a positive integer.
std::optional<TraceSettings> readTraceSettings(std::string& error);

/// One instance's record. Written by that instance's thread only.
class InstanceTrace {
 public:
  InstanceTrace(int instance, std::size_t capacity) : instance_(instance), capacity_(capacity) {}

  void span(lang::TraceSpanKind kind, std::int32_t what, double start, double end) noexcept;
  /// This instance sent its `index`-th message on pipe `pipe` to instance `reader`, now.
  void sent(std::int32_t pipe, std::int32_t reader, std::uint64_t index) noexcept;
  /// This instance took the `index`-th message of pipe `pipe` from instance `writer`, now.
  void taken(std::int32_t pipe, std::int32_t writer, std::uint64_t index) noexcept;
  /// A kernel launch from `start` of `seconds` (the host path: the launch; a GPU: its events' time).
  void kernel(const char* name, double start, double seconds) noexcept;
  /// A cuBLAS or cuFFT call from `start` on the host, of `seconds`.
  void libraryCall(const char* function, double start, double seconds) noexcept;
  void bodyStarts() noexcept { body_.first = profileClockSeconds(); }
  void bodyEnds() noexcept { body_.second = profileClockSeconds(); }

  int instance() const { return instance_; }
  const std::vector<lang::TraceSpan>& spans() const { return spans_; }
  const std::vector<lang::TraceMessageEnd>& sends() const { return sends_; }
  const std::vector<lang::TraceMessageEnd>& receipts() const { return receipts_; }
  const std::vector<std::string>& kernels() const { return kernels_; }
  std::pair<double, double> body() const { return body_; }
  std::uint64_t dropped() const { return dropped_; }
  /// The time of the first event not recorded; the body's end when none was lost.
  double recordedUntil() const { return dropped_ == 0 ? body_.second : firstDrop_; }

 private:
  /// Adds `item` (recorded at `now`) to `buffer` when it has room; counts the drop otherwise, or when
  /// memory runs out (the trace loses the record, never the run).
  template <class Item>
  void record(std::vector<Item>& buffer, const Item& item, double now) noexcept {
    if (buffer.size() < capacity_) {
      try {
        buffer.push_back(item);
        return;
      } catch (...) {
      }
    }
    if (dropped_++ == 0) firstDrop_ = now;
  }

  int instance_;
  std::size_t capacity_;
  std::vector<lang::TraceSpan> spans_;
  std::vector<lang::TraceMessageEnd> sends_, receipts_;
  std::vector<std::string> kernels_;
  /// Adds a span of `kind` (Kernel, Library) named `name` to the device track.
  void deviceWork(lang::TraceSpanKind kind, const char* name, double start, double seconds) noexcept;
  std::map<const char*, std::int32_t> kernelIndex_;  // by the name's address: launch sites pass literals
  std::pair<double, double> body_{0, 0};
  std::uint64_t dropped_ = 0;
  double firstDrop_ = 0;
};

/// Records the span from its construction to its destruction in `trace` (nothing when it is null).
class TraceSpanTimer {
 public:
  TraceSpanTimer(InstanceTrace* trace, lang::TraceSpanKind kind, std::int32_t what) noexcept
      : trace_(trace), kind_(kind), what_(what), start_(trace != nullptr ? profileClockSeconds() : 0) {}
  ~TraceSpanTimer() {
    if (trace_ != nullptr) trace_->span(kind_, what_, start_, profileClockSeconds());
  }
  TraceSpanTimer(const TraceSpanTimer&) = delete;
  TraceSpanTimer& operator=(const TraceSpanTimer&) = delete;

 private:
  InstanceTrace* trace_;
  lang::TraceSpanKind kind_;
  std::int32_t what_;
  double start_;
};

/// Collective over MPI_COMM_WORLD, at start-up: this rank's clock minus rank 0's, in seconds, and how it
/// was found (for the trace's metadata). `leaders`: nodeLeaders(). Ranks of one node share its clock; each node's first
/// rank measures its offset to rank 0 by ping-pong (the exchange with the shortest round trip of several), and every
/// rank of the node takes it. 0 under SMPI, whose clock is the simulation's.
std::pair<double, std::string> alignTraceClock(int rank, const std::vector<int>& leaders);

/// Collective over MPI_COMM_WORLD at the end: gathers every rank's instance records on rank 0, which
/// writes `settings.path` (through a temporary beside it, renamed). Each rank puts its times on rank 0's
/// clock with `offset` (alignTraceClock); rank 0 makes them relative to its `origin`. False with `error`
/// (on rank 0) when it cannot.
bool gatherTrace(const TraceSettings& settings, const ProgramSpec& program, const std::vector<InstanceTrace*>& mine,
                 const std::vector<lang::TracedInstance>& described, int rank, double origin, double offset,
                 const std::string& clock, std::string& error);

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_TRACE_H
