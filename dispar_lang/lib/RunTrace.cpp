#include "dispar_lang/RunTrace.h"

#include "dispar_lang/JsonLayout.h"
#include "dispar_lang/JsonRead.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace dispar::lang {

namespace {

// Trace Event Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
// (timestamps in microseconds; "X" complete events; "s"/"f" flow events bound to enclosing slices).

/// The thread id of an instance's own track and of its kernels' track, within its rank's process.
int instanceTrack(int instance) { return instance + 1; }
int kernelTrack(int instance) { return 1000000 + instance; }

/// Microseconds with nanosecond resolution, as the format's "ts" and "dur".
void appendMicros(std::string& out, double seconds) {
  char number[40];
  std::snprintf(number, sizeof number, "%.3f", seconds * 1e6);
  out += number;
}

/// One event of one track before it is written: tracks are written in time order.
struct TrackEvent {
  enum Type : std::uint8_t { Compute, Read, Write, Kernel, Library, Unrecorded, FlowStart, FlowEnd };
  double ts = 0, dur = 0;
  Type type = Compute;
  std::int32_t what = -1;  // pipe or kernel
  std::uint64_t flow = 0;
};

TrackEvent::Type trackEventType(TraceSpanKind kind) {
  switch (kind) {
    case TraceSpanKind::Read: return TrackEvent::Read;
    case TraceSpanKind::Write: return TrackEvent::Write;
    case TraceSpanKind::Kernel: return TrackEvent::Kernel;
    case TraceSpanKind::Library: return TrackEvent::Library;
  }
  return TrackEvent::Compute;
}

struct MessageKey {
  std::int32_t pipe, writer, reader;
  std::uint64_t index;
  bool operator==(const MessageKey& other) const {
    return pipe == other.pipe && writer == other.writer && reader == other.reader && index == other.index;
  }
};
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& key) const {
    std::uint64_t h = key.index * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.pipe)) << 40) ^
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.writer)) << 20) ^
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.reader));
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

/// The body's time outside its port calls, as compute spans; what its buffer did not record, marked.
void addComputeSpans(const TracedInstance& instance, std::vector<TrackEvent>& events) {
  std::vector<std::pair<double, double>> ports;
  for (const TrackEvent& event : events)
    if (event.type == TrackEvent::Read || event.type == TrackEvent::Write)
      ports.emplace_back(event.ts, event.ts + event.dur);
  std::sort(ports.begin(), ports.end());
  const double until = std::min(instance.bodyEnd, instance.recordedUntil);
  double cursor = instance.bodyStart;
  const auto compute = [&](double from, double to) {
    if (to > from) events.push_back({from, to - from, TrackEvent::Compute, -1, 0});
  };
  for (const auto& [start, end] : ports) {
    if (start >= until) break;
    if (start < instance.bodyStart) continue;  // initial(N) messages, before the body
    compute(cursor, start);
    cursor = std::max(cursor, end);
  }
  compute(cursor, until);
  if (until < instance.bodyEnd)
    events.push_back(
        {std::max(until, cursor), instance.bodyEnd - std::max(until, cursor), TrackEvent::Unrecorded, -1, 0});
}

}  // namespace

std::string writeRunTraceJson(const RunTrace& trace) {
  std::map<int, const TracedInstance*> instances;
  for (const TracedInstance& instance : trace.instances) instances[instance.instance] = &instance;
  std::map<int, std::vector<TrackEvent>> tracks, kernelTracks;  // by instance
  for (const TracedInstance& instance : trace.instances) tracks[instance.instance];
  for (const TraceSpan& span : trace.spans) {
    if (instances.count(span.instance) == 0) continue;
    (isDeviceWork(span.kind) ? kernelTracks : tracks)[span.instance].push_back(
        {span.start, std::max(0.0, span.end - span.start), trackEventType(span.kind), span.what, 0});
  }
  for (auto& [number, events] : tracks) addComputeSpans(*instances[number], events);

  // Messages: each send matched with its taking; drawn as flows, every k-th beyond the limit.
  std::unordered_map<MessageKey, double, MessageKeyHash> sent;
  sent.reserve(trace.sends.size());
  for (const TraceMessageEnd& end : trace.sends)
    sent.emplace(MessageKey{end.pipe, end.writer, end.reader, end.index}, end.time);
  struct Matched {
    double sent, taken;
    const TraceMessageEnd* end;
  };
  std::vector<Matched> matched;
  matched.reserve(trace.receipts.size());
  for (const TraceMessageEnd& end : trace.receipts) {
    const auto it = sent.find(MessageKey{end.pipe, end.writer, end.reader, end.index});
    if (it != sent.end() && instances.count(end.writer) != 0 && instances.count(end.reader) != 0)
      matched.push_back({it->second, std::max(it->second, end.time), &end});
  }
  std::sort(matched.begin(), matched.end(), [](const Matched& a, const Matched& b) {
    return a.sent != b.sent ? a.sent < b.sent : a.end->index < b.end->index;
  });
  const std::uint64_t limit = std::max<std::uint64_t>(1, trace.flowLimit);
  const std::uint64_t every = matched.size() <= limit ? 1 : (matched.size() + limit - 1) / limit;
  std::uint64_t flows = 0;
  for (std::size_t m = 0; m < matched.size(); m += every) {
    const Matched& message = matched[m];
    ++flows;
    tracks[message.end->writer].push_back({message.sent, 0, TrackEvent::FlowStart, message.end->pipe, flows});
    tracks[message.end->reader].push_back({message.taken, 0, TrackEvent::FlowEnd, message.end->pipe, flows});
  }

  std::string out;
  out.reserve(256 + (trace.spans.size() * 2 + flows * 2) * 110);
  out += "{\"traceEvents\": [\n";
  bool first = true;
  const auto begin = [&](const char* ph, const char* name, int pid) {
    out += first ? "  {" : ",\n  {";
    first = false;
    out += "\"ph\": \"";
    out += ph;
    out += "\", \"name\": ";
    appendJsonString(out, name);
    out += ", \"pid\": " + std::to_string(pid);
  };
  const auto metadata = [&](const char* name, int pid, const int* tid, const std::string& key, const std::string& text,
                            const int* number) {
    begin("M", name, pid);
    if (tid != nullptr) out += ", \"tid\": " + std::to_string(*tid);
    out += ", \"args\": {";
    appendJsonString(out, key);
    out += ": ";
    if (number != nullptr)
      out += std::to_string(*number);
    else
      appendJsonString(out, text);
    out += "}}";
  };

  // Processes (ranks) and their tracks, named and in order.
  std::map<int, std::string> rankHosts;
  for (const TracedInstance& instance : trace.instances) rankHosts.emplace(instance.rank, instance.host);
  for (const auto& [rank, host] : rankHosts) {
    metadata("process_name", rank, nullptr, "name", "rank " + std::to_string(rank) + " on " + host, nullptr);
    metadata("process_sort_index", rank, nullptr, "sort_index", "", &rank);
  }
  for (const auto& [number, instance] : instances) {
    const std::string label = instance->vnode + "[" + std::to_string(instance->replica) + "]";
    int tid = instanceTrack(number);
    metadata("thread_name", instance->rank, &tid, "name", label + " (" + instance->device + ")", nullptr);
    metadata("thread_sort_index", instance->rank, &tid, "sort_index", "", &tid);
    if (kernelTracks.count(number) != 0) {
      tid = kernelTrack(number);
      metadata("thread_name", instance->rank, &tid, "name",
               label + " kernels and library calls" + (instance->device == "gpu" ? " (GPU)" : " (host path)"), nullptr);
      metadata("thread_sort_index", instance->rank, &tid, "sort_index", "", &tid);
    }
  }

  const auto pipeName = [&](std::int32_t pipe) {
    return pipe >= 0 && static_cast<std::size_t>(pipe) < trace.pipes.size()
               ? trace.pipes[static_cast<std::size_t>(pipe)]
               : "pipe " + std::to_string(pipe);
  };
  const auto writeTrack = [&](const TracedInstance& instance, int tid, std::vector<TrackEvent>& events) {
    std::stable_sort(events.begin(), events.end(),
                     [](const TrackEvent& a, const TrackEvent& b) { return a.ts < b.ts; });
    for (const TrackEvent& event : events) {
      std::string name;
      const char* category = "";
      const char* ph = "X";
      switch (event.type) {
        case TrackEvent::Compute: name = "compute", category = "compute"; break;
        case TrackEvent::Read: name = "read " + pipeName(event.what), category = "read"; break;
        case TrackEvent::Write: name = "write " + pipeName(event.what), category = "write"; break;
        case TrackEvent::Kernel:
        case TrackEvent::Library:
          name = event.what >= 0 && static_cast<std::size_t>(event.what) < trace.kernels.size()
                     ? trace.kernels[static_cast<std::size_t>(event.what)]
                     : "kernel";
          category = event.type == TrackEvent::Kernel ? "kernel" : "library";
          break;
        case TrackEvent::Unrecorded:
          name = "not recorded (DISPAR_TRACE_EVENTS reached)", category = "unrecorded";
          break;
        case TrackEvent::FlowStart: name = pipeName(event.what), category = "message", ph = "s"; break;
        case TrackEvent::FlowEnd: name = pipeName(event.what), category = "message", ph = "f"; break;
      }
      begin(ph, name.c_str(), instance.rank);
      out += ", \"tid\": " + std::to_string(tid) + ", \"cat\": \"" + category + "\", \"ts\": ";
      appendMicros(out, event.ts);
      if (*ph == 'X') {
        out += ", \"dur\": ";
        appendMicros(out, event.dur);
        if (event.type == TrackEvent::Read || event.type == TrackEvent::Write) {
          out += ", \"args\": {\"pipe\": ";
          appendJsonString(out, pipeName(event.what));
          out += "}";
        }
      } else {
        out += ", \"id\": " + std::to_string(event.flow);
        if (*ph == 'f') out += ", \"bp\": \"e\"";
      }
      out += "}";
    }
  };
  for (auto& [number, events] : tracks) writeTrack(*instances[number], instanceTrack(number), events);
  for (auto& [number, events] : kernelTracks) writeTrack(*instances[number], kernelTrack(number), events);
  out += "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"format\": ";
  appendJsonString(out, kRunTraceFormat);
  out += ", \"version\": " + std::to_string(kRunTraceVersion) + ", \"program\": ";
  appendJsonString(out, trace.program);
  out += std::string(", \"simulated\": ") + (trace.simulated ? "true" : "false") + ", \"clock\": ";
  appendJsonString(out, trace.clock);
  out += ", \"instances\": " + std::to_string(trace.instances.size());
  out += ", \"messages\": " + std::to_string(matched.size());
  out += ", \"flows\": " + std::to_string(flows);
  out += ", \"flow_limit\": " + std::to_string(limit);
  out += ", \"flow_every\": " + std::to_string(every);
  out += ", \"dropped_events\": " + std::to_string(trace.droppedEvents);
  out += "}}\n";
  return out;
}

TraceCheck checkTraceEventJson(const std::string& text, nlohmann::json* parsed) {
  TraceCheck check;
  const auto problem = [&](std::string what) {
    if (check.problems.size() < TraceCheck::kMostProblems) check.problems.push_back(std::move(what));
  };
  nlohmann::json own;
  nlohmann::json& document = parsed != nullptr ? *parsed : own;
  std::string error;
  if (!parseJson(text, document, error)) {
    problem("not JSON: " + error);
    return check;
  }
  const nlohmann::json* events = &document;
  if (document.is_object()) {
    const auto it = document.find("traceEvents");
    if (it == document.end() || !it->is_array()) {
      problem("the object has no \"traceEvents\" array");
      return check;
    }
    events = &*it;
  } else if (!document.is_array()) {
    problem("neither an object with \"traceEvents\" nor an array of events");
    return check;
  }

  static const std::set<std::string> kPhases = {"X", "B", "E", "i", "I", "M", "s", "t", "f", "C", "b", "e", "n"};
  struct Track {
    double last = -INFINITY;
    std::size_t open = 0;  // B events not yet ended
  };
  std::map<std::pair<std::int64_t, std::int64_t>, Track> tracks;
  struct Flow {
    int starts = 0, ends = 0;
    double start = 0, end = INFINITY;
  };
  std::map<std::string, Flow> flows;
  const auto isInteger = [](const nlohmann::json& value) {
    return value.is_number_integer() || value.is_number_unsigned();
  };
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& event = (*events)[i];
    const std::string where = "traceEvents[" + std::to_string(i) + "]";
    if (!event.is_object()) {
      problem(where + ": not an object");
      continue;
    }
    const auto ph = event.find("ph");
    if (ph == event.end() || !ph->is_string() || kPhases.count(ph->get<std::string>()) == 0) {
      problem(where + ": no known \"ph\"");
      continue;
    }
    const std::string phase = ph->get<std::string>();
    const std::string at = where + " (ph " + phase + ")";
    const auto name = event.find("name");
    if (phase != "E" && (name == event.end() || !name->is_string())) problem(at + ": no \"name\" string");
    const auto pid = event.find("pid");
    if (pid == event.end() || !isInteger(*pid)) {
      problem(at + ": no integer \"pid\"");
      continue;
    }
    const auto tid = event.find("tid");
    const bool processMetadata =
        phase == "M" && name != event.end() && name->is_string() && name->get<std::string>().rfind("process_", 0) == 0;
    if (!processMetadata && (tid == event.end() || !isInteger(*tid))) {
      problem(at + ": no integer \"tid\"");
      continue;
    }
    if (phase == "M") {
      if (name != event.end() && name->is_string() && *name == "thread_name") {
        ++check.tracks;
        const auto args = event.find("args");
        if (args == event.end() || !args->is_object() || !args->contains("name") || !(*args)["name"].is_string())
          problem(at + ": thread_name without args.name");
        else
          check.trackNames.push_back((*args)["name"].get<std::string>());
      }
      continue;
    }
    ++check.events;
    const auto ts = event.find("ts");
    if (ts == event.end() || !ts->is_number() || !std::isfinite(ts->get<double>())) {
      problem(at + ": no numeric \"ts\"");
      continue;
    }
    const double time = ts->get<double>();
    Track& track = tracks[{pid->get<std::int64_t>(), tid->get<std::int64_t>()}];
    if (time < track.last)
      problem(at + ": ts " + std::to_string(time) + " is before the previous event's " + std::to_string(track.last) +
              " on track " + std::to_string(pid->get<std::int64_t>()) + "/" + std::to_string(tid->get<std::int64_t>()));
    track.last = std::max(track.last, time);
    if (phase == "X") {
      const auto dur = event.find("dur");
      if (dur == event.end() || !dur->is_number() || !(dur->get<double>() >= 0))
        problem(at + ": complete event without a \"dur\" >= 0");
    } else if (phase == "B") {
      ++track.open;
    } else if (phase == "E") {
      if (track.open == 0)
        problem(at + ": end event with no begin on its track");
      else
        --track.open;
    } else if (phase == "s" || phase == "f" || phase == "t") {
      const auto id = event.find("id");
      if (id == event.end() || !(id->is_string() || isInteger(*id))) {
        problem(at + ": flow event without an \"id\"");
        continue;
      }
      const auto category = event.find("cat");
      Flow& flow = flows[(category != event.end() && category->is_string() ? category->get<std::string>() : "") +
                         "\x1f" + id->dump()];
      if (phase == "s") {
        ++flow.starts;
        flow.start = time;
      } else if (phase == "f") {
        ++flow.ends;
        flow.end = time;
      }
    }
  }
  for (const auto& [key, track] : tracks)
    if (track.open != 0)
      problem("track " + std::to_string(key.first) + "/" + std::to_string(key.second) + ": " +
              std::to_string(track.open) + " begin event(s) never ended");
  for (const auto& [key, flow] : flows) {
    const std::string id = key.substr(key.find('\x1f') + 1);
    if (flow.starts != 1 || flow.ends != 1)
      problem("flow " + id + ": " + std::to_string(flow.starts) + " start(s) and " + std::to_string(flow.ends) +
              " end(s), not one of each");
    else if (flow.end < flow.start)
      problem("flow " + id + ": ends before it starts");
    else
      ++check.flows;
  }
  return check;
}

}  // namespace dispar::lang
