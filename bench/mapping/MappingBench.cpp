// Mapping benchmark (bench/mapping/README.md). Prints one row per instance, a summary with the ratios
// against the baselines measured in the same run, and the scale case's time and peak RSS.
#include "dispar_lang/Rtg.h"
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"
#include "streammap/Commands.h"
#include "streammap/CostHistory.h"
#include "streammap/CostModel.h"
#include "streammap/MapPlanner.h"
#include "streammap/MappingProblem.h"
#include "streammap/PaperMapper.h"
#include "streammap/RankGroups.h"
#include "streammap/RefineMapper.h"
#include "streammap/ResourceDb.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace dispar;
using namespace dispar::streammap;
using lang::Requirement;

struct GpuModel {
  const char* name;
  int sms, clockKHz, ccMajor, ccMinor;
};

// Relative speeds (GpuSpeed.h): K80 0.22, T4 0.42, V100 0.80, A100 1.00, H100 3.04.
constexpr GpuModel kGpuModels[] = {
    {"Tesla K80", 13, 875000, 3, 7}, {"Tesla T4", 40, 1590000, 7, 5}, {"Tesla V100", 80, 1530000, 7, 0},
    {"A100", 108, 1410000, 8, 0},    {"H100", 132, 1755000, 9, 0},
};
constexpr int kGpuCounts[] = {0, 0, 1, 2, 4};
constexpr int kCoreCounts[] = {8, 16, 32};

enum class Shape { Pipeline, SplitJoin, Layered };
const char* shapeName(Shape s) {
  return s == Shape::Pipeline ? "pipeline" : s == Shape::SplitJoin ? "splitjoin" : "layered";
}

lang::RtgVertex makeVertex(int id, SplitMix64& rng) {
  lang::RtgVertex v;
  v.id = v.rank = id;
  v.vnode = "v" + std::to_string(id);
  // Costs in reference-GPU seconds: GPU stages 0.5-5, CPU stages 0.02-0.2 (with CPU cores at
  // 0.05-0.15 of the reference GPU, 0.1-4 s on one core).
  v.type = rng.below(2) ? Requirement::CG : Requirement::CO;
  v.cost = v.type == Requirement::CG ? 0.5 + 4.5 * rng.unit() : 0.02 + 0.18 * rng.unit();
  return v;
}

lang::RtgEdge makeEdge(int from, int to, SplitMix64& rng) {
  lang::RtgEdge e;
  e.from = from;
  e.to = to;
  e.pipe = "p";
  e.elementBytes = 4;
  e.volume = (1ull << 20) << rng.below(8);  // 1 MiB .. 128 MiB per message
  return e;
}

lang::Rtg makeRtg(Shape shape, int vertices, SplitMix64& rng) {
  lang::Rtg rtg;
  rtg.program = "bench";
  for (int v = 0; v < vertices; ++v) rtg.vertices.push_back(makeVertex(v, rng));
  if (shape == Shape::Pipeline) {
    for (int v = 0; v + 1 < vertices; ++v) rtg.edges.push_back(makeEdge(v, v + 1, rng));
  } else if (shape == Shape::SplitJoin) {
    // split (0) -> branches of equal length -> join (last).
    const int inner = vertices - 2;
    const int branches = std::max(1, std::min(inner, 2 + static_cast<int>(rng.below(4))));
    const int length = std::max(1, inner / branches);
    int next = 1;
    for (int b = 0; b < branches && next < vertices - 1; ++b) {
      int previous = 0;
      for (int k = 0; k < length && next < vertices - 1; ++k, ++next) {
        rtg.edges.push_back(makeEdge(previous, next, rng));
        previous = next;
      }
      rtg.edges.push_back(makeEdge(previous, vertices - 1, rng));
    }
    for (; next < vertices - 1; ++next) {  // leftovers hang off the split
      rtg.edges.push_back(makeEdge(0, next, rng));
      rtg.edges.push_back(makeEdge(next, vertices - 1, rng));
    }
  } else {
    // Layers of 1..width vertices; each vertex gets one or two arcs from the previous layer.
    const int width = std::max(2, static_cast<int>(std::sqrt(static_cast<double>(vertices))));
    int layerStart = 0, previousStart = -1, previousEnd = -1;
    while (layerStart < vertices) {
      const int size = std::min(vertices - layerStart, 1 + static_cast<int>(rng.below(width)));
      for (int v = layerStart; v < layerStart + size && previousStart >= 0; ++v) {
        const int span = previousEnd - previousStart;
        rtg.edges.push_back(makeEdge(previousStart + static_cast<int>(rng.below(span)), v, rng));
        if (rng.below(2)) rtg.edges.push_back(makeEdge(previousStart + static_cast<int>(rng.below(span)), v, rng));
      }
      previousStart = layerStart;
      previousEnd = layerStart + size;
      layerStart += size;
    }
  }
  return rtg;
}

Cluster makeCluster(int nodes, SplitMix64& rng) {
  Cluster c;
  for (int n = 0; n < nodes; ++n) {
    NodeInfo node;
    char host[32];
    std::snprintf(host, sizeof host, "node%05d", n);
    node.host = host;
    node.cores = node.threads = kCoreCounts[rng.below(std::size(kCoreCounts))];
    node.cpuSpeed = 0.05 + 0.1 * rng.unit();
    const int gpus = n == 0 ? 1 : kGpuCounts[rng.below(std::size(kGpuCounts))];
    const GpuModel& model = kGpuModels[rng.below(std::size(kGpuModels))];
    for (int g = 0; g < gpus; ++g) {
      GpuInfo info;
      info.index = g;
      info.name = model.name;
      info.multiprocessors = model.sms;
      info.clockKHz = model.clockKHz;
      info.ccMajor = model.ccMajor;
      info.ccMinor = model.ccMinor;
      node.gpus.push_back(info);
    }
    c.nodes.push_back(std::move(node));
  }
  return c;
}

// Each vertex on a uniformly drawn node that may run it (CG only on GPU nodes).
std::vector<int> randomMapping(const MappingProblem& p, SplitMix64& rng) {
  std::vector<int> gpuNodes;
  for (int n = 0; n < p.nodeCount(); ++n)
    if (p.nodes[n].hasGpu()) gpuNodes.push_back(n);
  std::vector<int> nodeOf(p.vertexCount());
  for (int v = 0; v < p.vertexCount(); ++v)
    nodeOf[v] = p.vertices[v].type == Requirement::CG ? gpuNodes[rng.below(gpuNodes.size())]
                                                      : static_cast<int>(rng.below(p.nodeCount()));
  return nodeOf;
}

// The optimum over every assignment that respects the CG constraint.
Score exhaustive(const MappingProblem& p) {
  std::vector<int> nodeOf(p.vertexCount(), 0);
  Score best{1e300, 1e300};
  for (;;) {
    bool valid = true;
    for (int v = 0; v < p.vertexCount() && valid; ++v)
      valid = p.allowed(v, nodeOf[v]) && (p.vertices[v].type == Requirement::CO || p.nodes[nodeOf[v]].hasGpu());
    if (valid) {
      const Score s = evaluate(p, nodeOf).score;
      if (scoreLess(s, best)) best = s;
    }
    int v = 0;
    while (v < p.vertexCount() && ++nodeOf[v] == p.nodeCount()) nodeOf[v++] = 0;
    if (v == p.vertexCount()) return best;
  }
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long peakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

struct Row {
  double rr, random, paper, refine, optimum;  // optimum < 0: not computed
  double refineFallback;                      // refine allowed host fallback, as round-robin is
  double refineOneRankEach;                   // refine's placement with one rank per instance
  int instances, ranks;                       // refine's, grouped
  bool heterogeneous;
};

// The period of `nodeOf` with its instances grouped into ranks as `streammap map` does by default (at
// most one rank per core); `ranks` receives the rank count.
double groupedPeriod(const MappingProblem& p, const std::vector<int>& nodeOf, int* ranks = nullptr) {
  RankLayout layout;
  std::string error;
  if (!groupRanks(p, nodeOf, RankPolicy{}, layout, error)) {
    std::fprintf(stderr, "bench_mapping: error: %s\n", error.c_str());
    std::exit(1);
  }
  if (ranks) *ranks = layout.rankCount();
  return evaluate(p, nodeOf, layout).score.period;
}

// ---- Wrong declared costs (issue 13): do profile-derived costs recover the true costs' mapping? ----

// A standard normal draw (Box-Muller).
double gaussian(SplitMix64& rng) {
  const double u1 = 1.0 - rng.unit(), u2 = rng.unit();  // u1 in (0, 1]
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// The period under `truth` (the true costs) of the placement and ranks `streammap map` (planMapping,
// refine) makes from `rtg`, mapped with `costs` when given (then `rtg` is its `costed`).
double periodUnderTruth(const lang::Rtg& rtg, const CostResolution* costs, const Cluster& cluster,
                        const MappingProblem& truth) {
  MapSettings settings;  // refine, default passes and ranks
  settings.costs = costs;
  MappingOutcome outcome;
  std::string error;
  if (!planMapping(rtg, cluster, settings, outcome, error)) {
    std::fprintf(stderr, "bench_mapping: error: %s\n", error.c_str());
    std::exit(1);
  }
  return evaluate(truth, outcome.result.nodeOf, outcome.ranks).score.period;
}

// Per instance: true costs t_v; declared costs t_v * 10^u, u uniform in [-1, 1], marked as cost clauses;
// profile-derived costs from 3-5 profiled runs per vertex (each sample t_v (1 + N(0, 5%)); run 3 of 5
// had a noisy neighbour that slowed a third of the vertices 3x), through CostHistory's robust estimate
// and resolveCosts, where the history comes before the clauses. Each mapping is priced with the true
// costs.
void runWrongCosts(bool quick) {
  SplitMix64 rng(1313);
  constexpr int kNoisyRun = 2;  // the run (of 3 to 5) with the noisy neighbour
  std::vector<double> declaredRatio, profileRatio;
  int samplesGiven = 0, samplesSlowed = 0, samplesKept = 0;
  std::printf("wrong declared costs (issue 13): each mapping (refine) priced with the true costs\n");
  std::printf("%-9s %4s %5s %10s %10s %10s %8s %8s\n", "shape", "V", "nodes", "true", "declared", "profile", "dec/true",
              "prof/true");
  const Shape shapes[] = {Shape::Pipeline, Shape::SplitJoin, Shape::Layered};
  const int sizes[] = {10, 20, 50, 100, 200};
  const int clusters[] = {4, 8, 16, 32};
  for (int vertices : sizes)
    for (int nodes : clusters)
      for (Shape shape : shapes) {
        if (quick && (vertices > 50 || nodes > 16)) continue;
        lang::Rtg truth = makeRtg(shape, vertices, rng);
        truth.program = "wrongcosts";
        Cluster cluster = makeCluster(nodes, rng);
        MappingProblem trueProblem;
        std::string error;
        if (!buildProblem(truth, cluster, false, trueProblem, error)) {
          std::fprintf(stderr, "bench_mapping: error: %s\n", error.c_str());
          std::exit(1);
        }
        bool gpuless = false, gpuful = false;
        for (const ProblemNode& n : trueProblem.nodes) (n.hasGpu() ? gpuful : gpuless) = true;
        if (!(gpuless && gpuful)) continue;  // heterogeneous clusters only

        lang::Rtg declared = truth;
        for (lang::RtgVertex& v : declared.vertices) {
          v.cost *= std::pow(10.0, 2 * rng.unit() - 1);
          v.costDeclared = true;
        }

        // The profiled runs, as `streammap profile add` records them: seconds per message on the device
        // the instance ran on, with that device's speed (a GPU node's GPU for CG, any node's CPU for CO).
        std::vector<int> gpuNodes;
        for (int n = 0; n < trueProblem.nodeCount(); ++n)
          if (trueProblem.nodes[n].hasGpu()) gpuNodes.push_back(n);
        std::vector<CostSample> samples;
        for (const lang::RtgVertex& v : truth.vertices) {
          const int runs = 3 + static_cast<int>(rng.below(3));
          const bool neighbourHit = rng.below(3) == 0;
          for (int run = 0; run < runs; ++run) {
            CostSample s;
            s.runId = 1 + run;
            s.program = truth.program;
            s.vnode = v.vnode;
            s.fingerprint = v.fingerprint;
            const bool gpu = v.type == Requirement::CG;
            const int node = gpu ? gpuNodes[rng.below(gpuNodes.size())] : static_cast<int>(rng.below(nodes));
            s.deviceClass = gpu ? "gpu" : "cpu";
            s.deviceModel = gpu ? cluster.nodes[node].gpus.front().name : "cpu";
            s.host = trueProblem.nodes[node].host;
            s.speed = gpu ? trueProblem.nodes[node].gpuSpeed : trueProblem.nodes[node].cpuSpeed;
            double work = v.cost * std::max(0.5, 1 + 0.05 * gaussian(rng));
            if (neighbourHit && run == kNoisyRun) {
              work *= 3;
              ++samplesSlowed;
            }
            s.secondsPerMessage = work / s.speed;
            samples.push_back(std::move(s));
          }
        }
        const CostHistory history(samples, {});
        for (const CostHistory::Entry& e : history.entries()) {
          samplesGiven += e.work.count;
          samplesKept += e.work.used;
        }
        CostInputs inputs;
        inputs.history = &history;
        const CostResolution profiled = resolveCosts(declared, inputs);
        for (const VertexCosts& c : profiled.vertices)
          if (c.onCpu.origin != CostOrigin::History) {
            std::fprintf(stderr, "bench_mapping: error: a vertex's cost did not come from the history\n");
            std::exit(1);
          }

        const double trueP = periodUnderTruth(truth, nullptr, cluster, trueProblem);
        const double declaredP = periodUnderTruth(declared, nullptr, cluster, trueProblem);
        const double profileP = periodUnderTruth(profiled.costed, &profiled, cluster, trueProblem);
        declaredRatio.push_back(declaredP / trueP);
        profileRatio.push_back(profileP / trueP);
        std::printf("%-9s %4d %5d %10.4g %10.4g %10.4g %8.3f %8.3f\n", shapeName(shape), vertices, nodes, trueP,
                    declaredP, profileP, declaredP / trueP, profileP / trueP);
      }
  std::printf("\nsummary over %zu heterogeneous instances (declared costs wrong by up to 10x; profile: 3-5 runs per "
              "vertex, 5%% noise, %d of %d samples slowed 3x by a noisy neighbour, %d kept by the robust estimate)\n",
              profileRatio.size(), samplesSlowed, samplesGiven, samplesKept);
  std::printf("  profile / true:  median %.4f, worst %.4f   (target: worst <= 1.10)\n", median(profileRatio),
              *std::max_element(profileRatio.begin(), profileRatio.end()));
  std::printf("  declared / true: median %.4f, worst %.4f   (for contrast: mapped with the wrong clauses)\n",
              median(declaredRatio), *std::max_element(declaredRatio.begin(), declaredRatio.end()));
  std::printf("\n");
}

// The scale case, in a child process so that its peak RSS is its own: the mapping in memory, then the
// whole `streammap map` command on files (parse, map, write machinefile and map.json; table discarded).
void runScale(int vertices, int nodes) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
    return;
  }
  prepareHeapForLargeInputs();  // as streammap's main does
  SplitMix64 rng(777);
  const lang::Rtg rtg = makeRtg(Shape::Layered, vertices, rng);
  const Cluster cluster = makeCluster(nodes, rng);
  const auto start = std::chrono::steady_clock::now();
  MappingProblem p;
  std::string error;
  if (!buildProblem(rtg, cluster, false, p, error)) {
    std::fprintf(stderr, "bench_mapping: error: %s\n", error.c_str());
    std::_Exit(1);
  }
  const MappingResult paper = mapPaper(p, {});
  const double paperTime = seconds(start);
  const MappingResult refined = mapRefine(p, paper, {});
  const double total = seconds(start);
  const Score ps = evaluate(p, paper.nodeOf).score, rs = evaluate(p, refined.nodeOf).score;

  char dir[] = "/tmp/bench-mapping-XXXXXX";
  if (!mkdtemp(dir)) std::_Exit(1);
  const std::string base = dir;
  std::string writeError;
  AtomicFileSet inputs;
  inputs.add(base + "/app.rtg.json", lang::writeRtgJson(rtg));
  inputs.add(base + "/cluster.json", writeClusterJson(cluster));
  if (!inputs.commit(writeError)) std::_Exit(1);
  const int savedStdout = dup(1), savedStderr = dup(2);
  const int devNull = open("/dev/null", O_WRONLY);
  std::fflush(stdout);
  dup2(devNull, 1);
  dup2(devNull, 2);  // the table and the oversubscription warning
  const auto commandStart = std::chrono::steady_clock::now();
  const int status =
      mapCommand({base + "/app.rtg.json", "-o", base + "/app.machinefile", "--cluster", base + "/cluster.json"});
  std::fflush(stdout);
  const double commandTime = seconds(commandStart);
  dup2(savedStdout, 1);
  dup2(savedStderr, 2);
  std::printf(
      "scale: %d vertices, %zu edges -> %d nodes:\n"
      "  in memory: paper %.3f s, paper + refine (bounded passes) %.3f s; period paper %.4g, refine %.4g (%.1fx)\n"
      "  streammap map on files (parse, map, write): %.3f s (status %d)\n"
      "  peak RSS %.1f MiB (%.0f bytes per vertex + edge, input included)\n",
      vertices, rtg.edges.size(), nodes, paperTime, total, ps.period, rs.period, ps.period / rs.period, commandTime,
      status, peakRssKiB() / 1024.0, peakRssKiB() * 1024.0 / (static_cast<double>(vertices) + rtg.edges.size()));
  std::fflush(stdout);
  if (!std::getenv("BENCH_KEEP")) std::system(("rm -rf '" + base + "'").c_str());
  std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  SplitMix64 rng(2015);
  std::vector<Row> rows;
  std::printf("%-9s %4s %5s %10s %10s %10s %10s %10s %8s %8s %8s %6s %8s\n", "shape", "V", "nodes", "round-rob",
              "random", "paper", "refine", "optimum", "ref/opt", "rr/ref", "pap/ref", "ranks", "grp/one");
  auto runInstance = [&](Shape shape, int vertices, int nodes, bool withOptimum) {
    const lang::Rtg rtg = makeRtg(shape, vertices, rng);
    const Cluster cluster = makeCluster(nodes, rng);
    MappingProblem p, fallback;
    std::string error;
    if (!buildProblem(rtg, cluster, false, p, error) || !buildProblem(rtg, cluster, true, fallback, error)) {
      std::fprintf(stderr, "bench_mapping: error: %s\n", error.c_str());
      std::exit(1);
    }
    Row row{};
    // What mpiexec does (roundRobinPlacement): on the host-fallback problem, since it ignores requirements,
    // one rank per instance as mpiexec starts them. Paper and refine as `streammap map` writes them: their
    // instances grouped into ranks (RankGroups.h), priced with the ranks' terms.
    row.rr = evaluate(fallback, roundRobinPlacement(fallback)).score.period;
    row.refineFallback = groupedPeriod(fallback, mapRefine(fallback, mapPaper(fallback, {}), {}).nodeOf);
    row.random = evaluate(p, randomMapping(p, rng)).score.period;
    const MappingResult paper = mapPaper(p, {});
    row.paper = groupedPeriod(p, paper.nodeOf);
    const MappingResult refined = mapRefine(p, paper, {});
    row.refine = groupedPeriod(p, refined.nodeOf, &row.ranks);
    row.refineOneRankEach = evaluate(p, refined.nodeOf).score.period;
    row.instances = vertices;
    row.optimum = withOptimum ? exhaustive(p).period : -1;
    bool gpuless = false, gpuful = false;
    for (const ProblemNode& n : p.nodes) (n.hasGpu() ? gpuful : gpuless) = true;
    row.heterogeneous = gpuless && gpuful;
    rows.push_back(row);
    std::printf("%-9s %4d %5d %10.4g %10.4g %10.4g %10.4g %10s %8s %8.2f %8.2f %6d %8.3f\n", shapeName(shape), vertices,
                nodes, row.rr, row.random, row.paper, row.refine,
                withOptimum ? std::to_string(row.optimum).substr(0, 10).c_str() : "-",
                withOptimum ? std::to_string(row.refine / row.optimum).substr(0, 5).c_str() : "-", row.rr / row.refine,
                row.paper / row.refine, row.ranks, row.refine / row.refineOneRankEach);
  };
  const Shape shapes[] = {Shape::Pipeline, Shape::SplitJoin, Shape::Layered};
  // Small instances, compared with the exhaustive optimum.
  for (int i = 0; i < (quick ? 6 : 30); ++i)
    runInstance(shapes[i % 3], 4 + static_cast<int>(rng.below(7)), 2 + static_cast<int>(rng.below(3)), true);
  // Larger instances.
  const int sizes[] = {10, 20, 50, 100, 200};
  const int clusters[] = {2, 4, 8, 16, 32, 64};
  for (int vertices : sizes)
    for (int nodes : clusters)
      for (Shape shape : shapes)
        if (!quick || (vertices <= 50 && nodes <= 16)) runInstance(shape, vertices, nodes, false);

  std::vector<double> refOpt, rrRef, rrRefFallback, paperRef, groupedCost;
  int worseThanPaper = 0, grouped = 0;
  for (const Row& r : rows) {
    if (r.ranks < r.instances) {
      ++grouped;
      groupedCost.push_back(r.refine / r.refineOneRankEach);
    }
    if (r.optimum > 0) refOpt.push_back(r.refine / r.optimum);
    if (r.heterogeneous) rrRef.push_back(r.rr / r.refine);
    rrRefFallback.push_back(r.rr / r.refineFallback);
    paperRef.push_back(r.paper / r.refine);
    worseThanPaper += r.refine > r.paper * (1 + 1e-9);
  }
  std::printf("\nsummary over %zu instances (cost-model periods; lower is better)\n", rows.size());
  std::printf("  refine / optimum     (%zu small instances): median %.4f, worst %.4f   (target: <= 1.05, <= 1.15)\n",
              refOpt.size(), median(refOpt), *std::max_element(refOpt.begin(), refOpt.end()));
  std::printf("  round-robin / refine (%zu heterogeneous):    median %.2fx, min %.2fx   (target: median >= 1.5x)\n",
              rrRef.size(), median(rrRef), *std::min_element(rrRef.begin(), rrRef.end()));
  std::printf("  round-robin / refine with host fallback, both (all): min %.2fx   (target: >= 1, never worse)\n",
              *std::min_element(rrRefFallback.begin(), rrRefFallback.end()));
  std::printf("  paper / refine       (all):                 median %.2fx, min %.2fx; refine worse than paper: %d "
              "(target: 0)\n",
              median(paperRef), *std::min_element(paperRef.begin(), paperRef.end()), worseThanPaper);
  if (!groupedCost.empty())
    std::printf("  grouping: %d instance(s) ran fewer ranks than instances; their period grouped / one rank each: "
                "median %.3f, worst %.3f (the rank terms' price for no more ranks than cores)\n",
                grouped, median(groupedCost), *std::max_element(groupedCost.begin(), groupedCost.end()));
  std::printf("\n");
  runWrongCosts(quick);
  if (!quick) runScale(50000, 5000);
  runScale(100000, 10000);
  return 0;
}
