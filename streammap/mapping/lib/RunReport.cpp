#include "streammap/RunReport.h"

#include "dispar_lang/JsonRead.h"
#include "dispar_lang/RunTrace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace dispar::streammap {

namespace {

constexpr std::size_t kTimelineBins = 120;

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", share * 100);
  return text;
}

std::string seconds(double value) {
  char text[32];
  if (value >= 1)
    std::snprintf(text, sizeof text, "%.2f s", value);
  else if (value >= 1e-3)
    std::snprintf(text, sizeof text, "%.2f ms", value * 1e3);
  else
    std::snprintf(text, sizeof text, "%.1f us", value * 1e6);
  return text;
}

std::string bytesText(std::uint64_t bytes) {
  char text[32];
  if (bytes >= (1u << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else if (bytes >= 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  return text;
}

std::string label(const RunReport::Instance& instance) {
  return instance.vnode + "[" + std::to_string(instance.replica) + "]";
}

/// The trace's compute time per instance track and per node, in bins over the run.
bool readTimeline(const std::string& text, RunReport& report, std::string& error) {
  nlohmann::json document;
  const lang::TraceCheck check = lang::checkTraceEventJson(text, &document);
  if (!check.problems.empty()) {
    error = "not a valid trace: " + check.problems.front();
    return false;
  }
  const nlohmann::json& events = document.is_object() ? document["traceEvents"] : document;
  std::map<std::int64_t, std::string> hostOfProcess;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> trackLabel;
  // The timeline starts at the first span: before it the ranks were starting (MPI_Init, links).
  double begin = INFINITY, end = 0;
  for (const auto& event : events) {
    const std::string ph = event["ph"].get<std::string>();
    const std::int64_t pid = event["pid"].get<std::int64_t>();
    if (ph == "M") {
      const std::string name = event["name"].get<std::string>();
      const auto args = event.find("args");
      if (args == event.end() || !args->contains("name") || !(*args)["name"].is_string()) continue;
      const std::string value = (*args)["name"].get<std::string>();
      if (name == "process_name") {
        const std::size_t on = value.find(" on ");
        hostOfProcess[pid] = on == std::string::npos ? value : value.substr(on + 4);
      } else if (name == "thread_name" && value.find(" kernels and library calls") == std::string::npos) {
        trackLabel[{pid, event["tid"].get<std::int64_t>()}] = value.substr(0, value.find(' '));
      }
      continue;
    }
    if (ph == "X") {
      begin = std::min(begin, event["ts"].get<double>());
      end = std::max(end, event["ts"].get<double>() + event["dur"].get<double>());
    }
  }
  if (!(end > begin)) return true;
  report.traceSeconds = (end - begin) * 1e-6;
  const double width = (end - begin) / kTimelineBins;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> busy;
  for (const auto& [key, name] : trackLabel) busy[key].assign(kTimelineBins, 0.0);
  for (const auto& event : events) {
    if (event["ph"] != "X" || !event.contains("cat") || event["cat"] != "compute") continue;
    const auto it = busy.find({event["pid"].get<std::int64_t>(), event["tid"].get<std::int64_t>()});
    if (it == busy.end()) continue;
    const double start = event["ts"].get<double>() - begin, stop = start + event["dur"].get<double>();
    for (auto bin = static_cast<std::size_t>(std::max(0.0, start / width));
         bin < kTimelineBins && static_cast<double>(bin) * width < stop; ++bin) {
      const double from = std::max(start, static_cast<double>(bin) * width);
      const double to = std::min(stop, static_cast<double>(bin + 1) * width);
      if (to > from) it->second[bin] += (to - from) / width;
    }
  }
  std::map<std::string, std::pair<std::vector<double>, int>> nodes;
  for (auto& [key, bins] : busy) {
    for (double& share : bins) share = std::min(1.0, share);
    report.tracks.push_back({trackLabel[key], bins});
    auto& node = nodes[hostOfProcess[key.first]];
    node.first.resize(kTimelineBins, 0.0);
    for (std::size_t b = 0; b < kTimelineBins; ++b) node.first[b] += bins[b];
    ++node.second;
  }
  for (auto& [host, node] : nodes) {
    for (double& share : node.first) share /= node.second;
    report.nodeTracks.push_back({host, node.first});
  }
  return true;
}

void judge(RunReport& report) {
  if (report.instances.empty()) {
    report.bottleneck = "none known: the profile has no instances";
    return;
  }
  const auto busiest = std::max_element(report.instances.begin(), report.instances.end(),
                                        [](const auto& a, const auto& b) { return a.share < b.share; });
  double othersWait = 0;
  for (const RunReport::Instance& instance : report.instances)
    if (&instance != &*busiest) othersWait += (instance.readWait + instance.writeWait) / report.wall;
  if (report.instances.size() > 1) othersWait /= static_cast<double>(report.instances.size() - 1);
  const std::string where = label(*busiest) + " on " + busiest->host + " (rank " + std::to_string(busiest->rank) + ")";
  if (busiest->share < 0.3) {
    report.bottleneck = "no instance computes most of the run: the busiest, " + where + ", computes " +
                        percent(busiest->share) + " of it. The run is bound by its messages, its start-up or " +
                        "waiting, not by one stage.";
    report.advice.push_back("fewer ranks (streammap map --ranks N groups instances into ranks, whose messages are "
                            "in-memory queues) or larger messages, so that each message carries more work");
    return;
  }
  report.bottleneck = where + " computes " + percent(busiest->share) + " of the run; every other instance waits in " +
                      "its ports " + percent(othersWait) + " of it on average: it sets the pace.";
  const auto vnode = std::find_if(report.vnodes.begin(), report.vnodes.end(),
                                  [&](const RunReport::Vnode& v) { return v.name == busiest->vnode; });
  if (vnode == report.vnodes.end()) return;
  if (vnode->gpuCode && busiest->device != "gpu")
    report.advice.push_back(vnode->name + " launches CUDA kernels but ran them on the host path: a node with a GPU "
                                          "would run them there (streammap map places it on one when the resources "
                                          "have one)");
  if (vnode->replicas == 1)
    report.advice.push_back("more replicas of " + vnode->name +
                            " (`replicas(2)` in its `#pragma streamap resource(...)`"
                            "), if its messages can be processed independently: the stream is then shared among them");
  double fastest = INFINITY, slowest = 0;
  for (const RunReport::Instance& instance : report.instances)
    if (instance.vnode == vnode->name)
      fastest = std::min(fastest, instance.compute), slowest = std::max(slowest, instance.compute);
  if (vnode->replicas > 1 && fastest > 0 && slowest / fastest > 1.5) {
    char ratio[16];
    std::snprintf(ratio, sizeof ratio, "%.1fx", slowest / fastest);
    report.advice.push_back("the replicas of " + vnode->name + " compute " + ratio +
                            " apart: `communication(PIPE) split(demand)` on the pipe into it lets the faster ones "
                            "take more messages");
  }
  if (busiest->device != "gpu" && !vnode->gpuCode)
    report.advice.push_back("a node with faster cores for " + vnode->name + ", or less work in it per message");
}

std::string escapeHtml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// Green (idle) to red (always computing).
std::string shareColour(double share) {
  char colour[48];
  std::snprintf(colour, sizeof colour, "hsl(%.0f, 75%%, 62%%)", (1 - std::clamp(share, 0.0, 1.0)) * 120);
  return colour;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

/// Each VNODE's column in the graph: the longest chain of pipes reaching it from a source, loops left out
/// (a pipe back to a VNODE on the depth-first path to it, searched from the VNODEs nothing feeds, in
/// order). Iterative and linear: an RTG may have 100,000 vertices.
std::map<std::string, int> columnsOf(const std::vector<RunReport::Pipe>& pipes,
                                     const std::vector<RunReport::Vnode>& vnodes) {
  std::map<std::string, std::vector<std::string>> next;
  std::set<std::string> fed;
  for (const RunReport::Pipe& pipe : pipes) next[pipe.from].push_back(pipe.to), fed.insert(pipe.to);
  std::set<std::pair<std::string, std::string>> back;
  std::map<std::string, int> state;  // 1 on the path, 2 done
  const auto visit = [&](const std::string& root) {
    std::vector<std::pair<std::string, std::size_t>> path{{root, 0}};
    state[root] = 1;
    while (!path.empty()) {
      auto& [from, edge] = path.back();
      const std::vector<std::string>& targets = next[from];
      if (edge == targets.size()) {
        state[from] = 2;
        path.pop_back();
        continue;
      }
      const std::string to = targets[edge++];
      if (state[to] == 1) {
        back.insert({from, to});
      } else if (state[to] == 0) {
        state[to] = 1;
        path.push_back({to, 0});
      }
    }
  };
  for (const RunReport::Vnode& vnode : vnodes)
    if (fed.count(vnode.name) == 0 && state[vnode.name] == 0) visit(vnode.name);
  for (const RunReport::Vnode& vnode : vnodes)
    if (state[vnode.name] == 0) visit(vnode.name);
  // Longest path over what is left, a DAG, in topological order (Kahn).
  std::map<std::string, int> waiting, column;
  for (const RunReport::Pipe& pipe : pipes)
    if (back.count({pipe.from, pipe.to}) == 0) ++waiting[pipe.to];
  std::vector<std::string> ready;
  for (const RunReport::Vnode& vnode : vnodes)
    if (waiting[vnode.name] == 0) ready.push_back(vnode.name);
  while (!ready.empty()) {
    const std::string from = ready.back();
    ready.pop_back();
    for (const std::string& to : next[from]) {
      if (back.count({from, to}) != 0) continue;
      column[to] = std::max(column[to], column[from] + 1);
      if (--waiting[to] == 0) ready.push_back(to);
    }
  }
  return column;
}

}  // namespace

bool analyseRun(const lang::Rtg& rtg, const lang::RunProfile& profile, const MapRecord* map,
                const std::string& traceText, RunReport& out, std::string& error) {
  out = RunReport{};
  out.program = profile.program;
  double longest = 0;
  for (const lang::ProfiledInstance& line : profile.instances)
    longest = std::max(longest, line.computeSeconds + line.readWaitSeconds + line.writeWaitSeconds);
  // Shares are of the longest body, not of the whole run: start-up (MPI_Init, links) is no stage's.
  out.wall = std::max(longest, 1e-9);
  out.runWall = profile.wallSeconds.value_or(longest);
  out.periodMessages = profile.periodMessages();
  for (const lang::ProfiledInstance& line : profile.instances)
    out.instances.push_back({line.vnode, line.replica, line.rank, line.host, line.device, line.computeSeconds,
                             line.readWaitSeconds, line.writeWaitSeconds, line.computeSeconds / out.wall});

  // VNODEs in the RTG's order, their pipes and the graph's columns.
  std::map<int, std::string> vnodeOfVertex;
  for (const lang::RtgVertex& vertex : rtg.vertices) {
    vnodeOfVertex[vertex.id] = vertex.vnode;
    auto it = std::find_if(out.vnodes.begin(), out.vnodes.end(), [&](const auto& v) { return v.name == vertex.vnode; });
    if (it == out.vnodes.end()) {
      out.vnodes.push_back({vertex.vnode, 0, vertex.type == lang::Requirement::CG, 0, 0});
      it = out.vnodes.end() - 1;
    }
    ++it->replicas;
  }
  for (RunReport::Vnode& vnode : out.vnodes) {
    double sum = 0;
    int count = 0;
    for (const RunReport::Instance& instance : out.instances)
      if (instance.vnode == vnode.name) sum += instance.share, ++count;
    vnode.share = count > 0 ? sum / count : 0;
  }
  std::map<std::string, std::uint64_t> messages, bytes;
  for (const lang::ProfiledPipe& pipe : profile.pipes)
    messages[pipe.pipe] = pipe.messages, bytes[pipe.pipe] = pipe.bytes;
  // One line per pipe and pair of VNODEs: a pipe read by several VNODEs has one to each.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const lang::RtgEdge& edge : rtg.edges)
    if (seen.insert({edge.pipe, vnodeOfVertex[edge.from], vnodeOfVertex[edge.to]}).second)
      out.pipes.push_back(
          {edge.pipe, vnodeOfVertex[edge.from], vnodeOfVertex[edge.to], messages[edge.pipe], bytes[edge.pipe]});
  std::map<std::string, int> columns = columnsOf(out.pipes, out.vnodes);
  for (RunReport::Vnode& vnode : out.vnodes) vnode.level = columns[vnode.name];

  // Nodes: the mapping's prediction against the busiest instance's compute per message.
  std::map<std::string, double> measured;
  for (const RunReport::Instance& instance : out.instances)
    measured[instance.host] =
        std::max(measured[instance.host], instance.compute / static_cast<double>(out.periodMessages));
  for (const auto& [host, value] : measured) {
    RunReport::Node node{host, std::nullopt, value};
    if (map != nullptr)
      for (const NodePrediction& predicted : map->nodes)
        if (predicted.host == host) node.predicted = std::max({predicted.cpu, predicted.gpu, predicted.net});
    out.nodes.push_back(node);
  }
  if (map != nullptr) out.predictedPeriod = map->period, out.costModel = map->costModel;
  out.measuredPeriod = out.wall / static_cast<double>(out.periodMessages);
  if (!traceText.empty() && !readTimeline(traceText, out, error)) return false;
  judge(out);
  return true;
}

std::string renderReportText(const RunReport& report) {
  std::string out = "run report: " + report.program + " (" + std::to_string(report.instances.size()) + " instances; " +
                    seconds(report.runWall) + " on rank 0, " + seconds(report.wall) + " in the longest VNODE body)\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %-12s %5s %-10s %10s %10s %10s %8s\n", "instance", "node", "rank", "device",
                "compute", "read wait", "write wait", "compute");
  out += line;
  for (const RunReport::Instance& instance : report.instances) {
    std::snprintf(line, sizeof line, "%-20s %-12s %5d %-10s %10s %10s %10s %8s\n", label(instance).c_str(),
                  instance.host.c_str(), instance.rank, instance.device.c_str(), seconds(instance.compute).c_str(),
                  seconds(instance.readWait).c_str(), seconds(instance.writeWait).c_str(),
                  percent(instance.share).c_str());
    out += line;
  }
  out += "\npipes:\n";
  for (const RunReport::Pipe& pipe : report.pipes)
    out += "  " + pipe.name + ": " + pipe.from + " -> " + pipe.to + ", " + std::to_string(pipe.messages) +
           " messages, " + bytesText(pipe.bytes) + "\n";
  out += "\nperiod: measured " + seconds(report.measuredPeriod) + " per message (" +
         std::to_string(report.periodMessages) + " messages)";
  if (report.predictedPeriod)
    out += "; the mapping predicted " + number(*report.predictedPeriod) + " (in its cost model's units)";
  out += "\n";
  for (const RunReport::Node& node : report.nodes)
    out += "  " + node.host + ": busiest instance " + seconds(node.measured) + " per message" +
           (node.predicted ? ", predicted load " + number(*node.predicted) : std::string()) + "\n";
  if (!report.nodeTracks.empty()) {
    out += "\nutilisation over the run (" + seconds(report.traceSeconds) + ", compute share per tenth):\n";
    for (const RunReport::Track& track : report.nodeTracks) {
      std::string bars;
      const std::size_t per = std::max<std::size_t>(1, track.busy.size() / 10);
      for (std::size_t b = 0; b < track.busy.size(); b += per) {
        double sum = 0;
        for (std::size_t i = b; i < std::min(track.busy.size(), b + per); ++i) sum += track.busy[i];
        bars += " " + percent(sum / static_cast<double>(per));
      }
      out += "  " + track.label + ":" + bars + "\n";
    }
  }
  out += "\nbottleneck: " + report.bottleneck + "\n";
  for (const std::string& advice : report.advice) out += "would help: " + advice + "\n";
  return out;
}

std::string renderReportHtml(const RunReport& report) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>DISPAR run report: " +
      escapeHtml(report.program) +
      "</title>\n<style>body{font:14px sans-serif;margin:24px;color:#222}h2{margin-top:28px}"
      "table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}"
      "td.n{text-align:right}.verdict{background:#fff4e0;padding:10px 14px;border-left:4px solid #e08a00}"
      "svg text{font:12px sans-serif}</style></head>\n<body>\n<h1>" +
      escapeHtml(report.program) + "</h1>\n<p>" + std::to_string(report.instances.size()) + " instances; " +
      seconds(report.runWall) + " on rank 0, " + seconds(report.wall) +
      " in the longest VNODE body (the shares below are of it).</p>\n<div class=\"verdict\"><p><b>Bottleneck:</b> " +
      escapeHtml(report.bottleneck) + "</p>";
  for (const std::string& advice : report.advice) html += "<p><b>Would help:</b> " + escapeHtml(advice) + "</p>";
  html += "</div>\n";

  // The graph: one box per VNODE in columns by depth, coloured by its share; pipes drawn by traffic.
  std::map<int, int> rowsOfLevel;
  std::map<std::string, std::pair<double, double>> at;
  for (const RunReport::Vnode& vnode : report.vnodes)
    at[vnode.name] = {30.0 + vnode.level * 210.0, 30.0 + (rowsOfLevel[vnode.level]++) * 80.0};
  int rows = 1, columns = 1;
  for (const auto& [level, count] : rowsOfLevel) rows = std::max(rows, count), columns = std::max(columns, level + 1);
  std::uint64_t most = 1;
  for (const RunReport::Pipe& pipe : report.pipes) most = std::max(most, pipe.bytes);
  html += "<h2>Graph</h2>\n<p>Each VNODE coloured by its replicas' mean compute share of the run (green idle, red "
          "always computing); each pipe as thick as its bytes.</p>\n<svg id=\"graph\" viewBox=\"0 0 " +
          number(60 + columns * 210.0) + " " + number(40 + rows * 80.0 + 40) +
          "\" style=\"width:100%;max-width:" + number(60 + columns * 210.0) + "px\">\n";
  for (const RunReport::Pipe& pipe : report.pipes) {
    const auto [x1, y1] = at[pipe.from];
    const auto [x2, y2] = at[pipe.to];
    const double width = 1 + 6 * static_cast<double>(pipe.bytes) / static_cast<double>(most);
    const std::string title = "<title>" + escapeHtml(pipe.name) + ": " + std::to_string(pipe.messages) + " messages, " +
                              bytesText(pipe.bytes) + "</title>";
    if (x2 > x1)
      html += "<line class=\"pipe\" x1=\"" + number(x1 + 150) + "\" y1=\"" + number(y1 + 22) + "\" x2=\"" + number(x2) +
              "\" y2=\"" + number(y2 + 22) + "\" stroke=\"#557\" stroke-width=\"" + number(width) + "\">" + title +
              "</line>\n";
    else  // back to an earlier column: a loop, drawn below the boxes
      html += "<path class=\"pipe\" d=\"M" + number(x1 + 75) + " " + number(y1 + 44) + " C" + number(x1 + 75) + " " +
              number(y1 + 100) + " " + number(x2 + 75) + " " + number(y2 + 100) + " " + number(x2 + 75) + " " +
              number(y2 + 44) + "\" fill=\"none\" stroke=\"#557\" stroke-dasharray=\"5 3\" stroke-width=\"" +
              number(width) + "\">" + title + "</path>\n";
  }
  for (const RunReport::Vnode& vnode : report.vnodes) {
    const auto [x, y] = at[vnode.name];
    html += "<g class=\"vnode\"><title>" + escapeHtml(vnode.name) + ": " + percent(vnode.share) +
            " of the run</title>" + "<rect x=\"" + number(x) + "\" y=\"" + number(y) +
            "\" width=\"150\" height=\"44\" rx=\"6\" fill=\"" + shareColour(vnode.share) +
            "\" stroke=\"#333\"/><text x=\"" + number(x + 8) + "\" y=\"" + number(y + 18) + "\">" +
            escapeHtml(vnode.name) + (vnode.replicas > 1 ? " x" + std::to_string(vnode.replicas) : "") +
            "</text><text x=\"" + number(x + 8) + "\" y=\"" + number(y + 36) + "\">" + percent(vnode.share) +
            (vnode.gpuCode ? " (CUDA)" : "") + "</text></g>\n";
  }
  html += "</svg>\n";

  html += "<h2>Mapping and time</h2>\n<table><tr><th>instance</th><th>node</th><th>rank</th><th>device</th>"
          "<th>compute</th><th>read wait</th><th>write wait</th><th>compute share</th></tr>\n";
  for (const RunReport::Instance& instance : report.instances)
    html += "<tr><td>" + escapeHtml(label(instance)) + "</td><td>" + escapeHtml(instance.host) +
            "</td><td class=\"n\">" + std::to_string(instance.rank) + "</td><td>" + escapeHtml(instance.device) +
            "</td><td class=\"n\">" + seconds(instance.compute) + "</td><td class=\"n\">" + seconds(instance.readWait) +
            "</td><td class=\"n\">" + seconds(instance.writeWait) + "</td><td class=\"n\">" + percent(instance.share) +
            "</td></tr>\n";
  html += "</table>\n<h2>Period</h2>\n<p>Measured: " + seconds(report.measuredPeriod) + " per message (" +
          std::to_string(report.periodMessages) + " messages).";
  if (report.predictedPeriod)
    html += " The mapping predicted <span title=\"" + escapeHtml(report.costModel) + "\">" +
            number(*report.predictedPeriod) + "</span> (in its cost model's units).";
  html += "</p>\n<table><tr><th>node</th><th>busiest instance, per message</th><th>predicted load</th></tr>\n";
  for (const RunReport::Node& node : report.nodes)
    html += "<tr><td>" + escapeHtml(node.host) + "</td><td class=\"n\">" + seconds(node.measured) +
            "</td><td class=\"n\">" + (node.predicted ? number(*node.predicted) : std::string("-")) + "</td></tr>\n";
  html += "</table>\n";

  // The timeline: per instance and per node, each bin's compute share as the opacity of its cell.
  if (!report.tracks.empty()) {
    const double cell = 900.0 / kTimelineBins;
    const auto rowsOf = [&](const std::vector<RunReport::Track>& tracks, const char* cls, const char* fill,
                            double top) {
      std::string svg;
      for (std::size_t t = 0; t < tracks.size(); ++t) {
        const double y = top + static_cast<double>(t) * 18;
        svg += "<g class=\"" + std::string(cls) + "\"><text x=\"0\" y=\"" + number(y + 12) + "\">" +
               escapeHtml(tracks[t].label) + "</text>";
        for (std::size_t b = 0; b < tracks[t].busy.size(); ++b)
          if (tracks[t].busy[b] > 0.005)
            svg += "<rect x=\"" + number(170 + static_cast<double>(b) * cell) + "\" y=\"" + number(y) + "\" width=\"" +
                   number(cell + 0.3) + "\" height=\"15\" fill=\"" + fill + "\" fill-opacity=\"" +
                   number(tracks[t].busy[b]).substr(0, 4) + "\"/>";
        svg +=
            "<rect x=\"170\" y=\"" + number(y) + "\" width=\"900\" height=\"15\" fill=\"none\" stroke=\"#ccc\"/></g>\n";
      }
      return svg;
    };
    const double nodesTop = 10 + static_cast<double>(report.tracks.size()) * 18 + 20;
    html += "<h2>Timeline</h2>\n<p>Compute share over the run's " + seconds(report.traceSeconds) +
            " (from the run trace), per instance and per node: the darker, the busier.</p>\n<svg id=\"timeline\" "
            "width=\"1080\" height=\"" +
            number(nodesTop + static_cast<double>(report.nodeTracks.size()) * 18 + 10) + "\">\n" +
            rowsOf(report.tracks, "track", "#2a6fb0", 10) +
            rowsOf(report.nodeTracks, "node-track", "#b0452a", nodesTop) + "</svg>\n";
  }
  html += "<h2>Pipes</h2>\n<table><tr><th>pipe</th><th>from</th><th>to</th><th>messages</th><th>bytes</th></tr>\n";
  for (const RunReport::Pipe& pipe : report.pipes)
    html += "<tr><td>" + escapeHtml(pipe.name) + "</td><td>" + escapeHtml(pipe.from) + "</td><td>" +
            escapeHtml(pipe.to) + "</td><td class=\"n\">" + std::to_string(pipe.messages) + "</td><td class=\"n\">" +
            bytesText(pipe.bytes) + "</td></tr>\n";
  html += "</table>\n"
          "<script>\n"
          "window.addEventListener('error', function (e) { document.body.dataset.errors = String(e.message); });\n"
          "document.body.dataset.vnodes = document.querySelectorAll('#graph .vnode').length;\n"
          "document.body.dataset.tracks = document.querySelectorAll('#timeline .track').length;\n"
          "</script>\n</body></html>\n";
  return html;
}

}  // namespace dispar::streammap
