// `streammap report` (docs/streammap.md, "Run reports"): what one run did, read at a glance. From the
// program's RTG, its run profile, its mapping (when there is one) and its run trace (when there is one):
// each VNODE's share of the run, the pipes' traffic, where every instance ran, utilisation over time, the
// mapping's predicted period against the measured one, the bottleneck in words and what would help.
// Rendered as one self-contained HTML file (inline SVG, no network) or as text for a terminal.
#ifndef STREAMMAP_RUN_REPORT_H
#define STREAMMAP_RUN_REPORT_H

#include "streammap/MapFile.h"

#include "dispar_lang/Rtg.h"
#include "dispar_lang/RunProfile.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

struct RunReport {
  struct Instance {
    std::string vnode;
    int replica = 0, rank = 0;
    std::string host, device;
    double compute = 0, readWait = 0, writeWait = 0;  // seconds
    double share = 0;                                 // compute over `wall`
  };
  struct Vnode {
    std::string name;
    int replicas = 0;
    bool gpuCode = false;  // CG in the RTG
    double share = 0;      // its replicas' mean share
    int level = 0;         // the graph's column: the longest chain of pipes from a source
  };
  struct Pipe {
    std::string name, from, to;  // VNODE names
    std::uint64_t messages = 0, bytes = 0;
  };
  struct Node {
    std::string host;
    std::optional<double> predicted;  // the mapping's predicted load of the node (its cost model's unit)
    double measured = 0;              // the busiest instance's compute per message there, seconds
  };
  /// One timeline row: the share of each time bin spent computing.
  struct Track {
    std::string label;  // "square[1]", or "node1" for a node's row
    std::vector<double> busy;
  };

  std::string program;
  double wall = 0;     // the longest VNODE body (compute and waits), seconds: what shares are of
  double runWall = 0;  // rank 0's whole run (start-up included), from the profile
  std::uint64_t periodMessages = 1;
  std::vector<Instance> instances;
  std::vector<Vnode> vnodes;
  std::vector<Pipe> pipes;
  std::vector<Node> nodes;
  std::optional<double> predictedPeriod;
  std::string costModel;
  double measuredPeriod = 0;  // `wall` over periodMessages
  double traceSeconds = 0;    // the timeline's span; 0 without a trace
  std::vector<Track> tracks, nodeTracks;
  std::string bottleneck;           // in words
  std::vector<std::string> advice;  // what would help, in words
};

/// Builds the report. `traceText`: the run trace's JSON, or empty; false with `error` when it is not a
/// valid trace.
bool analyseRun(const lang::Rtg& rtg, const lang::RunProfile& profile, const MapRecord* map,
                const std::string& traceText, RunReport& out, std::string& error);

std::string renderReportText(const RunReport& report);
/// One self-contained HTML page: inline SVG and a small inline script that counts what it draws
/// (body data-vnodes, data-tracks; data-errors when a script fails) for the browser test.
std::string renderReportHtml(const RunReport& report);

}  // namespace dispar::streammap

#endif
