// `streammap report ./APP`: a run, read at a glance (docs/streammap.md, "Run reports"; RunReport.h).
#include "streammap/AtomicFiles.h"
#include "streammap/CommandLine.h"
#include "streammap/Commands.h"
#include "streammap/InputFiles.h"
#include "streammap/RunReport.h"

#include <cstdio>

namespace dispar::streammap {

namespace {

const CommandSpec kReportSpec = {
    "streammap report ./APP [--profile FILE] [--trace FILE] [--map FILE] [--format html|text] [-o FILE]",
    "What one run of ./APP did: each VNODE's share of the run and each pipe's traffic on the program's graph, where\n"
    "every instance ran, the mapping's predicted period against the measured one per node, utilisation over\n"
    "time (from a run trace), the bottleneck in words and what would help. Reads APP.rtg.json, the run profile\n"
    "(default APP.profile.json, as streammap run writes it), the mapping (default APP.map.json, when it exists)\n"
    "and a run trace when given. Writes one self-contained HTML file (default APP.report.html), or text.",
    {{"--profile", "FILE", "the run profile (DISPAR_PROFILE, streammap run --profile); default APP.profile.json"},
     {"--trace", "FILE", "the run trace (DISPAR_TRACE, streammap run --trace), for the timeline"},
     {"--map", "FILE", "the mapping the run used; default APP.map.json when it exists"},
     {"--format", "html|text", "html (default) or text"},
     {"-o", "FILE", "where the report goes; default APP.report.html for html, standard output for text"}}};

}  // namespace

int reportCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kReportSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (cl.positional().size() != 1) {
    CommandLine::printHelp(kReportSpec, stderr);
    return reportUsageError("report: expected one program, ./APP");
  }
  const std::string format = cl.value("--format", "html");
  if (format != "html" && format != "text")
    return reportUsageError("report: --format must be 'html' or 'text', got '" + escapedForDisplay(format) + "'");
  const std::string program = cl.positional().front();
  std::string error;
  lang::Rtg rtg;
  if (!readRtg(program + ".rtg.json", rtg, error)) return reportError("report: " + error);
  lang::RunProfile profile;
  const std::string profilePath = cl.value("--profile", program + ".profile.json");
  if (!readRunProfile(profilePath, profile, error))
    return reportError(
        "report: " + error +
        (cl.has("--profile") ? "" : " (run the program with streammap run, which profiles it, or give --profile)"));
  if (profile.program != rtg.program)
    return reportError("report: " + profilePath + " is a profile of '" + escapedForDisplay(profile.program) +
                       "', but " + program + ".rtg.json describes '" + escapedForDisplay(rtg.program) + "'");
  MapRecord map;
  const std::string mapPath = cl.value("--map", program + ".map.json");
  bool haveMap = false;
  if (cl.has("--map") || fileExists(mapPath)) {
    std::string text;
    if (!readFile(mapPath, text, error) || !parseMapJson(text, map, error)) return reportError("report: " + error);
    haveMap = true;
  }
  std::string trace;
  if (cl.has("--trace") && !readFile(cl.value("--trace"), trace, error)) return reportError("report: " + error);
  RunReport report;
  if (!analyseRun(rtg, profile, haveMap ? &map : nullptr, trace, report, error))
    return reportError("report: " + cl.value("--trace") + ": " + error);
  const std::string text = format == "html" ? renderReportHtml(report) : renderReportText(report);
  const std::string output = cl.value("-o", format == "html" ? program + ".report.html" : "");
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (!writeFileAtomically(output, text, error)) return reportError("report: " + error);
  std::printf("streammap report: wrote %s\n", output.c_str());
  return 0;
}

}  // namespace dispar::streammap
