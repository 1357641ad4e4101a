#include "Trace.h"

#include "MpiCheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>

#ifdef DISPAR_TARGET_SMPI
#include <dispar/smpi/SimulatedGpu.h>
#endif

namespace dispar::rt {

namespace {

/// A positive integer setting, or nullopt with `error`.
template <class Integer>
std::optional<Integer> positiveSetting(const char* variable, Integer fallback, std::string& error) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*text == '-' || end == text || *end != '\0' || errno != 0 || value == 0 ||
      value > static_cast<unsigned long long>(std::numeric_limits<Integer>::max())) {
    error = std::string(variable) + "='" + text + "': not a positive integer";
    return std::nullopt;
  }
  return static_cast<Integer>(value);
}

// The trace's own work (gathering, formatting, writing) is left out of a simulated run's time, as the
// profile's is (Profile.cpp).
#ifdef DISPAR_TARGET_SMPI
using TraceWorkUntimed = smpi::UntimedSection;
#else
struct TraceWorkUntimed {};
#endif

/// One rank's records as bytes: a header of counts, the spans and message ends as they are in memory
/// (every rank runs the same binary), then a JSON text of the instances and kernel and library names.
struct PartHeader {
  std::uint64_t spans = 0, sends = 0, receipts = 0, text = 0, dropped = 0;
  std::uint64_t tooLarge = 0;  // the part's bytes, when it is too large to gather: sent alone
};

template <class Record>
void appendRecords(std::string& bytes, const std::vector<Record>& records) {
  bytes.append(reinterpret_cast<const char*>(records.data()), records.size() * sizeof(Record));
}

template <class Record>
void readRecords(const char*& at, std::uint64_t count, std::vector<Record>& into) {
  const std::size_t first = into.size();
  into.resize(first + count);
  std::memcpy(static_cast<void*>(into.data() + first), at, count * sizeof(Record));
  at += count * sizeof(Record);
}

}  // namespace

std::optional<TraceSettings> readTraceSettings(std::string& error) {
  TraceSettings settings;
  if (const char* path = std::getenv("DISPAR_TRACE")) settings.path = path;
  const auto events =
      positiveSetting<std::size_t>("DISPAR_TRACE_EVENTS", TraceSettings::kDefaultEventsPerInstance, error);
  if (!events) return std::nullopt;
  const auto flows = positiveSetting<std::uint64_t>("DISPAR_TRACE_FLOWS", TraceSettings::kDefaultFlowLimit, error);
  if (!flows) return std::nullopt;
  settings.eventsPerInstance = *events;
  settings.flowLimit = *flows;
  return settings;
}

void InstanceTrace::span(lang::TraceSpanKind kind, std::int32_t what, double start, double end) noexcept {
  record(spans_, {start, end, instance_, kind, what}, start);
}

void InstanceTrace::sent(std::int32_t pipe, std::int32_t reader, std::uint64_t index) noexcept {
  const double now = profileClockSeconds();
  record(sends_, {now, pipe, instance_, reader, index}, now);
}

void InstanceTrace::taken(std::int32_t pipe, std::int32_t writer, std::uint64_t index) noexcept {
  const double now = profileClockSeconds();
  record(receipts_, {now, pipe, writer, instance_, index}, now);
}

void InstanceTrace::kernel(const char* name, double start, double seconds) noexcept {
  deviceWork(lang::TraceSpanKind::Kernel, name, start, seconds);
}

void InstanceTrace::libraryCall(const char* function, double start, double seconds) noexcept {
  deviceWork(lang::TraceSpanKind::Library, function, start, seconds);
}

void InstanceTrace::deviceWork(lang::TraceSpanKind kind, const char* name, double start, double seconds) noexcept {
  if (spans_.size() >= capacity_) return record(spans_, {}, start);  // counts the drop
  try {
    auto [it, added] = kernelIndex_.try_emplace(name, static_cast<std::int32_t>(kernels_.size()));
    if (added) kernels_.emplace_back(name != nullptr ? name : "kernel");
    record(spans_, {start, start + seconds, instance_, kind, it->second}, start);
  } catch (...) {
    ++dropped_;
  }
}

std::pair<double, std::string> alignTraceClock(int rank, const std::vector<int>& leaders) {
#ifdef DISPAR_TARGET_SMPI
  (void)rank, (void)leaders;
  return {0.0, "the simulated cluster's clock (SMPI)"};
#else
  // The ranks of one node read one steady clock; a node's first rank measures it against rank 0's.
  const int size = static_cast<int>(leaders.size());
  const auto leaderOf = [&](int r) { return leaders[static_cast<std::size_t>(r)]; };
  constexpr int kRounds = 8;
  constexpr int kTag = 0x7ace;
  double offset = 0;
  int nodes = 0;
  for (int other = 0; other < size; ++other) {
    if (leaderOf(other) != other) continue;
    ++nodes;
    if (other == 0) continue;  // rank 0's node: offset 0
    if (rank == 0) {
      double best = std::numeric_limits<double>::infinity(), bestOffset = 0;
      for (int round = 0; round < kRounds; ++round) {
        const double before = profileClockSeconds();
        DISPAR_MPI(MPI_Send, &before, 1, MPI_DOUBLE, other, kTag, MPI_COMM_WORLD);
        double theirs = 0;
        DISPAR_MPI(MPI_Recv, &theirs, 1, MPI_DOUBLE, other, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double after = profileClockSeconds();
        if (after - before < best) best = after - before, bestOffset = theirs - (before + after) / 2;
      }
      DISPAR_MPI(MPI_Send, &bestOffset, 1, MPI_DOUBLE, other, kTag, MPI_COMM_WORLD);
    } else if (rank == other) {
      for (int round = 0; round < kRounds; ++round) {
        double theirs = 0;
        DISPAR_MPI(MPI_Recv, &theirs, 1, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double now = profileClockSeconds();
        DISPAR_MPI(MPI_Send, &now, 1, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD);
      }
      DISPAR_MPI(MPI_Recv, &offset, 1, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (nodes > 1) {  // every rank takes its node leader's offset
    std::vector<double> offsets(static_cast<std::size_t>(size));
    DISPAR_MPI(MPI_Allgather, &offset, 1, MPI_DOUBLE, offsets.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    offset = offsets[static_cast<std::size_t>(leaderOf(rank))];
  }
  return {offset, nodes == 1 ? "one node's steady clock"
                             : "each node's steady clock, offset to rank 0's by ping-pong at start-up (" +
                                   std::to_string(nodes) + " nodes)"};
#endif
}

bool gatherTrace(const TraceSettings& settings, const ProgramSpec& program, const std::vector<InstanceTrace*>& mine,
                 const std::vector<lang::TracedInstance>& described, int rank, double origin, double offset,
                 const std::string& clock, std::string& error) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string bytes;
  {
    [[maybe_unused]] const TraceWorkUntimed untimed;
    // This rank's part, on rank 0's clock (rank 0 makes it relative to its origin).
    const auto shift = [&](double time) { return time - offset; };
    lang::RunTrace part;
    nlohmann::json text = {{"instances", nlohmann::json::array()}, {"kernels", nlohmann::json::array()}};
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const InstanceTrace& trace = *mine[i];
      const auto kernelBase = static_cast<std::int32_t>(part.kernels.size());
      part.kernels.insert(part.kernels.end(), trace.kernels().begin(), trace.kernels().end());
      for (lang::TraceSpan span : trace.spans()) {
        span.start = shift(span.start), span.end = shift(span.end);
        if (lang::isDeviceWork(span.kind)) span.what += kernelBase;
        part.spans.push_back(span);
      }
      for (lang::TraceMessageEnd end : trace.sends()) end.time = shift(end.time), part.sends.push_back(end);
      for (lang::TraceMessageEnd end : trace.receipts()) end.time = shift(end.time), part.receipts.push_back(end);
      part.droppedEvents += trace.dropped();
      const lang::TracedInstance& about = described[i];
      text["instances"].push_back({{"instance", about.instance},
                                   {"rank", about.rank},
                                   {"host", about.host},
                                   {"vnode", about.vnode},
                                   {"replica", about.replica},
                                   {"device", about.device},
                                   {"body", {shift(trace.body().first), shift(trace.body().second)}},
                                   {"recorded_until", shift(trace.recordedUntil())}});
    }
    text["kernels"] = part.kernels;
    const std::string json = text.dump();
    const PartHeader header{part.spans.size(), part.sends.size(), part.receipts.size(), json.size(),
                            part.droppedEvents};
    bytes.append(reinterpret_cast<const char*>(&header), sizeof header);
    appendRecords(bytes, part.spans);
    appendRecords(bytes, part.sends);
    appendRecords(bytes, part.receipts);
    bytes += json;
    // One gather counts bytes in an int: a part beyond its share of that goes as its header alone, marked,
    // and rank 0 refuses the trace.
    if (bytes.size() > static_cast<std::size_t>(INT_MAX / size)) {
      PartHeader tooLarge;
      tooLarge.tooLarge = bytes.size();
      bytes.assign(reinterpret_cast<const char*>(&tooLarge), sizeof tooLarge);
    }
  }
  // Two collectives: at the end of a run every one costs its slowest rank's arrival, and more under
  // oversubscription.
  const int length = static_cast<int>(bytes.size());
  std::vector<int> counts(rank == 0 ? static_cast<std::size_t>(size) : 0);
  DISPAR_MPI(MPI_Gather, &length, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(counts.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[r]);
  }
  std::string all(total, '\0');
  DISPAR_MPI(MPI_Gatherv, bytes.data(), length, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
             MPI_COMM_WORLD);
  if (rank != 0) return true;

  [[maybe_unused]] const TraceWorkUntimed untimed;
  lang::RunTrace trace;
  trace.program = program.program != nullptr ? program.program : "";
#ifdef DISPAR_TARGET_SMPI
  trace.simulated = true;
#endif
  trace.clock = clock;
  trace.flowLimit = settings.flowLimit;
  for (int p = 0; p < program.pipeCount; ++p) trace.pipes.emplace_back(program.pipes[p].name);
  for (int r = 0; r < size; ++r) {
    const char* at = all.data() + offsets[static_cast<std::size_t>(r)];
    PartHeader header;
    std::memcpy(&header, at, sizeof header);
    at += sizeof header;
    if (header.tooLarge != 0) {
      error = "rank " + std::to_string(r) + "'s trace records (" + std::to_string(header.tooLarge >> 20) +
              " MiB) are too large to gather; lower DISPAR_TRACE_EVENTS (now " +
              std::to_string(settings.eventsPerInstance) + " per instance)";
      return false;
    }
    const auto kernelBase = static_cast<std::int32_t>(trace.kernels.size());
    const std::size_t firstSpan = trace.spans.size();
    readRecords(at, header.spans, trace.spans);
    readRecords(at, header.sends, trace.sends);
    readRecords(at, header.receipts, trace.receipts);
    trace.droppedEvents += header.dropped;
    const nlohmann::json text = nlohmann::json::parse(std::string(at, header.text));
    for (const auto& name : text["kernels"]) trace.kernels.push_back(name.get<std::string>());
    for (std::size_t s = firstSpan; s < trace.spans.size(); ++s)
      if (lang::isDeviceWork(trace.spans[s].kind)) trace.spans[s].what += kernelBase;
    for (const auto& about : text["instances"]) {
      lang::TracedInstance instance;
      instance.instance = about["instance"].get<int>();
      instance.rank = about["rank"].get<int>();
      instance.host = about["host"].get<std::string>();
      instance.vnode = about["vnode"].get<std::string>();
      instance.replica = about["replica"].get<int>();
      instance.device = about["device"].get<std::string>();
      instance.bodyStart = about["body"][0].get<double>();
      instance.bodyEnd = about["body"][1].get<double>();
      instance.recordedUntil = about["recorded_until"].get<double>();
      trace.instances.push_back(std::move(instance));
    }
  }
  // From rank 0's origin.
  for (lang::TraceSpan& span : trace.spans) span.start -= origin, span.end -= origin;
  for (lang::TraceMessageEnd& end : trace.sends) end.time -= origin;
  for (lang::TraceMessageEnd& end : trace.receipts) end.time -= origin;
  for (lang::TracedInstance& instance : trace.instances)
    instance.bodyStart -= origin, instance.bodyEnd -= origin, instance.recordedUntil -= origin;
  return writeResultFile("DISPAR_TRACE", "trace", settings.path, lang::writeRunTraceJson(trace), error);
}

}  // namespace dispar::rt
