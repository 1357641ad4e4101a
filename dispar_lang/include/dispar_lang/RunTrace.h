// The run trace (docs/runtime.md, "Run traces"): what every VNODE instance did when, as a file in the Trace
// Event Format that Perfetto's UI and chrome://tracing open. The runtime records spans and message ends
// (DISPAR_TRACE=FILE) and writes the file with writeRunTraceJson; checkTraceEventJson checks any file
// against the format's rules (the tests' and `streammap report`'s reader). One writer and one checker, here;
// the runtime compiles this file into its own library, as it does the run profile's.
#ifndef DISPAR_LANG_RUN_TRACE_H
#define DISPAR_LANG_RUN_TRACE_H

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dispar::lang {

inline constexpr const char* kRunTraceFormat = "dispar-trace";
inline constexpr int kRunTraceVersion = 1;

/// What a recorded span is. Compute is not recorded: it is the body's time outside its port calls,
/// derived when the file is written (a span per gap), so that a port call costs two clock reads.
enum class TraceSpanKind : std::uint8_t {
  Read,     // a read-side port call (waiting for data included); `what` is the pipe
  Write,    // a write-side port call (waiting for credit included); `what` is the pipe
  Kernel,   // a kernel launch (the kernel's time on a GPU; the launch, which runs it, on the host path)
  Library,  // a cuBLAS or cuFFT call, timed on the host (on a GPU: its queuing)
};

/// Whether spans of `kind` are device work (the instance's kernels-and-library-calls track), whose `what`
/// names a function in RunTrace::kernels.
inline bool isDeviceWork(TraceSpanKind kind) { return kind == TraceSpanKind::Kernel || kind == TraceSpanKind::Library; }

/// A recorded span, in seconds from the trace's origin (rank 0's start, clocks aligned).
struct TraceSpan {
  double start = 0, end = 0;
  std::int32_t instance = 0;  // the program's instance number (VnodeSpec::firstRank + replica)
  TraceSpanKind kind = TraceSpanKind::Read;
  std::int32_t what = -1;  // the pipe (Read, Write), or the name in RunTrace::kernels (Kernel, Library)
};

/// One end of one message on one link: the writer's send or the reader's taking it. The n-th message
/// (1-based `index`) a writer sent on a link is the n-th its reader takes from it.
struct TraceMessageEnd {
  double time = 0;
  std::int32_t pipe = 0, writer = 0, reader = 0;  // instance numbers
  std::uint64_t index = 0;
};

struct TracedInstance {
  int instance = 0;
  int rank = 0;
  std::string host, vnode;
  int replica = 0;
  std::string device;                 // "cpu", "gpu" or "host-path"
  double bodyStart = 0, bodyEnd = 0;  // the VNODE body, from its first line to its return
  /// Where its record ends: its buffer filled here (later spans were dropped), or bodyEnd. Compute is
  /// derived only up to it; the rest of the body is marked "not recorded".
  double recordedUntil = 0;
};

struct RunTrace {
  std::string program;
  bool simulated = false;  // SMPI: times are the simulated cluster's
  std::string clock;       // how the ranks' clocks were aligned, in words
  std::vector<TracedInstance> instances;
  std::vector<std::string> pipes;    // by pipe index
  std::vector<std::string> kernels;  // kernel and library function names, TraceSpan::what of their spans
  std::vector<TraceSpan> spans;
  std::vector<TraceMessageEnd> sends, receipts;
  /// Spans and message ends not recorded because an instance's buffer was full (DISPAR_TRACE_EVENTS).
  std::uint64_t droppedEvents = 0;
  /// At most this many messages are drawn as flow arrows; beyond it every k-th (the file says k).
  std::uint64_t flowLimit = 10000;
};

/// The trace as a Trace Event Format JSON object: one process per rank ("rank 0 on node1"), one thread
/// track per instance ("square[1]"), one more per instance that launched kernels or called libraries;
/// complete ("X") events for compute, read and write spans, kernels and library calls, flow ("s"/"f")
/// events from each drawn message's send to
/// its taking; "otherData" says the format, the clock, the message and flow counts and the sampling.
/// Events of a track are in time order.
std::string writeRunTraceJson(const RunTrace& trace);

/// What checkTraceEventJson found in a file: its problems (empty: it follows the format) and its counts.
struct TraceCheck {
  std::vector<std::string> problems;  // "traceEvents[12] (ph X): dur is negative", at most kMostProblems
  std::size_t events = 0, tracks = 0, flows = 0;
  std::vector<std::string> trackNames;  // thread_name metadata, in file order
  static constexpr std::size_t kMostProblems = 20;
};

/// Checks `text` against the Trace Event Format's rules: a JSON object with a "traceEvents" array (or
/// the bare array), every event an object with a known "ph", a "name", integer "pid" and "tid", a numeric
/// "ts" (all but metadata), "dur" >= 0 on complete events; begin/end events matched per track; every flow
/// id with one start and one end no earlier than it; timestamps non-decreasing per track in file order.
/// `parsed`: where the document goes, for a reader that goes on to use it (parsed once).
TraceCheck checkTraceEventJson(const std::string& text, nlohmann::json* parsed = nullptr);

}  // namespace dispar::lang

#endif
