#include "streammap/PaperMapper.h"

#include <algorithm>
#include <set>
#include <utility>

namespace dispar::streammap {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
  // Rejection sampling keeps the draw uniform.
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return x % bound;
}

double SplitMix64::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

ResourceTables buildResourceTables(const MappingProblem& problem) {
  ResourceTables t;
  t.total.assign(problem.nodeCount(), 0);
  for (int n = 0; n < problem.nodeCount(); ++n) {
    const ProblemNode& node = problem.nodes[n];
    if (node.hasGpu()) {
      t.grt.push_back(n);
      t.total[n] = node.gpus;
    } else {
      t.crt.push_back(n);
      t.total[n] = node.cores;
    }
  }
  auto capability = [&](int n) {
    const ProblemNode& node = problem.nodes[n];
    return node.hasGpu() ? node.gpus * node.gpuSpeed : node.cores * node.cpuSpeed;
  };
  auto mostCapableFirst = [&](int a, int b) {
    const double ca = capability(a), cb = capability(b);
    if (ca != cb) return ca > cb;
    return a < b;  // problem nodes are in host order
  };
  std::sort(t.crt.begin(), t.crt.end(), mostCapableFirst);
  std::sort(t.grt.begin(), t.grt.end(), mostCapableFirst);
  return t;
}

int paperStartVertex(const MappingProblem& problem) {
  for (int v = 0; v < problem.vertexCount(); ++v)
    if (!problem.hasIncoming[v]) return v;
  return 0;
}

namespace {

// The state of one run of the seven steps.
class PaperRun {
 public:
  PaperRun(const MappingProblem& p, const PaperOptions& options)
      : p_(p), tables_(buildResourceTables(p)), available_(tables_.total), assignedCount_(p.nodeCount(), 0),
        assigned_(p.vertexCount(), 0), rng_(options.seed.value_or(0)), randomPick_(options.seed.has_value()) {
    // With no GPU anywhere (host fallback allowed, else buildProblem failed) CG vertices are CO.
    cgAsCo_ = !p.anyGpuNode();
    for (int n = 0; n < p.nodeCount(); ++n) {
      allByLoad_.emplace(0.0, n);
      if (p.nodes[n].hasGpu()) gpuByLoad_.emplace(0.0, n);
    }
    pool_.resize(p.vertexCount());
    position_.resize(p.vertexCount());
    for (int v = 0; v < p.vertexCount(); ++v) pool_[v] = position_[v] = v;
    result_.nodeOf.assign(p.vertexCount(), -1);
    result_.placements.resize(p.vertexCount());
    for (long total : tables_.total) result_.slots += total;
  }

  MappingResult run() {
    int current = paperStartVertex(p_);
    for (int placed = 0; placed < p_.vertexCount(); ++placed) {
      place(current);                 // steps 2-6
      current = nextVertex(current);  // step 7
    }
    return std::move(result_);
  }

 private:
  bool isCg(int v) const { return p_.vertices[v].type == lang::Requirement::CG && !cgAsCo_; }

  void place(int v) {
    result_.visitOrder.push_back(v);
    Placement& how = result_.placements[v];
    const bool cg = isCg(v);
    int node = -1;
    if (!cg && crtPointer_ < tables_.crt.size()) {  // step 4
      node = tables_.crt[crtPointer_];
      how.rule = PlacementRule::CrtPointer;
      how.runnerUp = nextInTables(crtPointer_ + 1, grtPointer_);
      takeSlot(node, crtPointer_);
    } else if (grtPointer_ < tables_.grt.size()) {  // step 3 (for a CO vertex: step 4 fell back to it)
      node = tables_.grt[grtPointer_];
      how.rule = cg ? PlacementRule::GrtPointer : PlacementRule::GrtForCo;
      how.runnerUp = nextInTables(tables_.crt.size(), grtPointer_ + 1);
      takeSlot(node, grtPointer_);
    } else {  // steps 5 and 6: the tables are exhausted
      ++result_.oversubscribed;
      const std::set<std::pair<double, int>>& byLoad = cg ? gpuByLoad_ : allByLoad_;
      for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v) && node < 0; ++it) {
        if (!assigned_[it->vertex] || (cg && !isCg(it->vertex))) continue;
        node = result_.nodeOf[it->vertex];
        how.rule = cg ? PlacementRule::AdjacentCg : PlacementRule::AdjacentAny;
        how.viaVertex = it->vertex;
        how.runnerUp = firstOtherThan(byLoad, node);
      }
      if (node < 0) {
        node = byLoad.begin()->second;
        how.rule = cg ? PlacementRule::LeastLoadedGpu : PlacementRule::LeastLoadedAny;
        how.runnerUp = firstOtherThan(byLoad, node);
      }
    }
    assign(v, node);
  }

  // The first node the tables' pointers would give after the current one, for --explain.
  int nextInTables(std::size_t crtIndex, std::size_t grtIndex) const {
    if (crtIndex < tables_.crt.size()) return tables_.crt[crtIndex];
    if (grtIndex < tables_.grt.size()) return tables_.grt[grtIndex];
    return -1;
  }

  static int firstOtherThan(const std::set<std::pair<double, int>>& byLoad, int node) {
    for (const auto& entry : byLoad)
      if (entry.second != node) return entry.second;
    return -1;
  }

  void takeSlot(int node, std::size_t& pointer) {
    if (--available_[node] == 0) ++pointer;  // the pointer moves on when the node is full
  }

  double load(int n) const { return static_cast<double>(assignedCount_[n]) / tables_.total[n]; }

  void assign(int v, int node) {
    allByLoad_.erase({load(node), node});
    if (p_.nodes[node].hasGpu()) gpuByLoad_.erase({load(node), node});
    ++assignedCount_[node];
    allByLoad_.emplace(load(node), node);
    if (p_.nodes[node].hasGpu()) gpuByLoad_.emplace(load(node), node);
    result_.nodeOf[v] = node;
    assigned_[v] = 1;
    const int last = pool_.back();
    pool_[position_[v]] = last;
    position_[last] = position_[v];
    pool_.pop_back();
  }

  int nextVertex(int current) {
    for (const Neighbour* it = p_.neighboursBegin(current); it != p_.neighboursEnd(current); ++it)
      if (!assigned_[it->vertex]) return it->vertex;
    if (pool_.empty()) return -1;
    if (randomPick_) return pool_[rng_.below(pool_.size())];
    while (lowestCursor_ < p_.vertexCount() && assigned_[lowestCursor_]) ++lowestCursor_;
    return lowestCursor_;
  }

  const MappingProblem& p_;
  ResourceTables tables_;
  std::vector<long> available_;
  std::vector<long> assignedCount_;
  std::vector<char> assigned_;
  std::size_t crtPointer_ = 0, grtPointer_ = 0;
  std::set<std::pair<double, int>> allByLoad_, gpuByLoad_;  // (assigned / total, node): least-loaded first
  std::vector<int> pool_, position_;                        // unassigned vertices, for step 7
  int lowestCursor_ = 0;
  SplitMix64 rng_;
  bool randomPick_;
  bool cgAsCo_ = false;
  MappingResult result_;
};

}  // namespace

MappingResult mapPaper(const MappingProblem& problem, const PaperOptions& options) {
  return PaperRun(problem, options).run();
}

}  // namespace dispar::streammap
