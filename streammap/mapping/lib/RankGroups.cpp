#include "streammap/RankGroups.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace dispar::streammap {

namespace {

std::vector<int> instancesPerNode(const MappingProblem& p, const std::vector<int>& nodeOf) {
  std::vector<int> count(p.nodeCount(), 0);
  for (int v = 0; v < p.vertexCount(); ++v) ++count[nodeOf[v]];
  return count;
}

}  // namespace

bool rankTargets(const MappingProblem& p, const std::vector<int>& nodeOf, const RankPolicy& policy,
                 std::vector<int>& targets, std::string& error) {
  const std::vector<int> instances = instancesPerNode(p, nodeOf);
  targets.assign(p.nodeCount(), 0);
  int used = 0;
  for (int n = 0; n < p.nodeCount(); ++n) used += instances[n] > 0;
  switch (policy.kind) {
    case RankPolicy::Kind::PerInstance: targets = instances; return true;
    case RankPolicy::Kind::AtMostCores:
      for (int n = 0; n < p.nodeCount(); ++n) targets[n] = std::min(instances[n], p.nodes[n].cores);
      return true;
    case RankPolicy::Kind::Exact: break;
  }
  if (policy.count < used || policy.count > p.vertexCount()) {
    error = "option --ranks: the mapping places " + std::to_string(p.vertexCount()) + " instance(s) on " +
            std::to_string(used) + " node(s), so it needs from " + std::to_string(used) + " to " +
            std::to_string(p.vertexCount()) + " ranks (one per node at least, one per instance at most), got " +
            std::to_string(policy.count);
    return false;
  }
  // Every used node one rank; each further rank to the node that needs it most: first nodes with fewer
  // ranks than cores, then the most instances per rank, then host order.
  for (int n = 0; n < p.nodeCount(); ++n) targets[n] = instances[n] > 0 ? 1 : 0;
  auto after = [&](int a, int b) {  // priority_queue order: true when a comes after b
    const bool aUnder = targets[a] < p.nodes[a].cores, bUnder = targets[b] < p.nodes[b].cores;
    if (aUnder != bUnder) return bUnder;
    const long long lhs = static_cast<long long>(instances[a]) * targets[b],
                    rhs = static_cast<long long>(instances[b]) * targets[a];
    if (lhs != rhs) return lhs < rhs;
    return a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(after)> queue(after);
  for (int n = 0; n < p.nodeCount(); ++n)
    if (targets[n] < instances[n]) queue.push(n);
  for (int extra = policy.count - used; extra > 0; --extra) {
    const int n = queue.top();
    queue.pop();
    ++targets[n];
    if (targets[n] < instances[n]) queue.push(n);
  }
  return true;
}

namespace {

// Groups the instances of one node into `ranks` groups. Loads are in the cost model's weights (a
// vertex's cost, on the CPU or on the GPU of its node), normalised by the caps below so that one number
// compares a group's CPU and GPU share.
class NodeGrouping {
 public:
  NodeGrouping(const MappingProblem& p, int node, const std::vector<int>& instances, int ranks,
               std::vector<int>& slotOf)
      : p_(p), ranks_(ranks), slotOf_(slotOf), instances_(instances) {
    groups_.resize(instances.size());
    owner_.resize(instances.size());
    std::vector<double> cpu, gpu;
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const int v = instances[i];
      slotOf_[v] = static_cast<int>(i);
      owner_[i] = static_cast<int>(i);
      Group& g = groups_[i];
      g.members = {v};
      g.label = v;
      (p.onGpu(v, node) ? g.gpu : g.cpu) = p.weightOn(v, node);
      cpu.push_back(g.cpu);
      gpu.push_back(g.gpu);
    }
    // What the best grouping into `ranks` ranks cannot avoid, per resource: the largest instance, the
    // even share (CPU: of the ranks, GPU: of the node's GPUs, which the model's node term assumes), and,
    // with more instances than ranks, two of the `ranks` + 1 largest in one rank. A merge within both
    // caps never raises the node's predicted time above the best grouping's.
    capCpu_ = cap(cpu, ranks);
    capGpu_ = cap(gpu, std::max(1, p.nodes[node].gpus));
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const int v = instances[i];
      for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it)
        if (it->vertex != v && slotOf_[it->vertex] >= 0) groups_[i].bytes[slotOf_[it->vertex]] += it->bytes;
    }
    alive_ = static_cast<int>(groups_.size());
  }

  enum class Start {
    Bytes,    // phase 1 (bytes first), then phase 2
    Balance,  // phase 2 alone: largest-first from single instances
    Loops,    // each feedback loop's instances into one group first (as far as the rank count allows), then both
  };
  std::vector<std::vector<int>> run(Start start) {
    if (start == Start::Loops) mergeLoops();
    if (start != Start::Balance) mergeByBytes();
    spreadLargestFirst();
    std::vector<std::vector<int>> out;
    for (Group& g : groups_)
      if (g.alive) out.push_back(std::move(g.members));
    for (const std::vector<int>& members : out)
      for (int v : members) slotOf_[v] = -1;
    return out;
  }

 private:
  struct Group {
    double cpu = 0, gpu = 0;
    std::vector<int> members;     // ascending
    int label = 0;                // its first vertex: ties go to the lower one
    std::map<int, double> bytes;  // neighbouring group (slot) -> bytes per message between them
    bool alive = true;
  };

  static double cap(std::vector<double> loads, int share) {
    double sum = 0;
    for (double w : loads) sum += w;
    std::sort(loads.rbegin(), loads.rend());
    double bound = std::max(loads.empty() ? 0.0 : loads.front(), sum / share);
    if (static_cast<int>(loads.size()) > share && share >= 1) bound = std::max(bound, loads[share - 1] + loads[share]);
    return bound;
  }

  static bool within(double load, double cap) { return load <= cap * (1 + 1e-9) + 1e-300; }

  double key(double cpu, double gpu) const {
    return std::max(capCpu_ > 0 ? cpu / capCpu_ : 0.0, capGpu_ > 0 ? gpu / capGpu_ : 0.0);
  }
  double key(const Group& g) const { return key(g.cpu, g.gpu); }
  double mergedKey(int a, int b) const { return key(groups_[a].cpu + groups_[b].cpu, groups_[a].gpu + groups_[b].gpu); }

  // `absorb` joins `keep`; the neighbours of `absorb` now neighbour `keep`. Returns those neighbours.
  std::vector<int> merge(int keep, int absorb) {
    Group& k = groups_[keep];
    Group& a = groups_[absorb];
    for (int v : a.members) owner_[slotOf_[v]] = keep;
    k.cpu += a.cpu;
    k.gpu += a.gpu;
    std::vector<int> members;
    std::merge(k.members.begin(), k.members.end(), a.members.begin(), a.members.end(), std::back_inserter(members));
    k.members = std::move(members);
    k.label = std::min(k.label, a.label);
    k.bytes.erase(absorb);
    std::vector<int> touched;
    for (const auto& [c, b] : a.bytes) {
      if (c == keep) continue;
      k.bytes[c] += b;
      groups_[c].bytes.erase(absorb);
      groups_[c].bytes[keep] += b;
      touched.push_back(c);
    }
    a.alive = false;
    a.bytes.clear();
    a.members.clear();
    --alive_;
    return touched;
  }

  // Phase 0 (Start::Loops): the instances of each feedback loop join one group, whatever their load, while
  // there are more groups than ranks. A loop's messages go around one at a time, so its instances never
  // compute at once: one core runs them as fast as several, and every hop between ranks it saves is a
  // message's latency off every turn (valueOf weighs that against the balance the other starts keep).
  void mergeLoops() {
    for (std::size_t i = 0; i < instances_.size() && alive_ > ranks_; ++i) {
      const int v = instances_[i];
      if (p_.loopOfVertex(v) < 0) continue;
      for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v) && alive_ > ranks_; ++it) {
        const int u = it->vertex;
        if (slotOf_[u] < 0 || p_.loopOfVertex(u) != p_.loopOfVertex(v)) continue;
        const int a = owner_[i], b = owner_[slotOf_[u]];
        if (a == b) continue;
        const bool keepA = groups_[a].label < groups_[b].label;
        merge(keepA ? a : b, keepA ? b : a);
      }
    }
  }

  // Phase 1: the pair of groups joined by the most bytes, while their merged load stays within the caps.
  // Loads only grow, so a pair over a cap stays over it and is dropped for good.
  void mergeByBytes() {
    struct Candidate {
      double bytes, key;
      int labelA, labelB, a, b;
      bool operator<(const Candidate& o) const {  // priority_queue: the top is the greatest
        if (bytes != o.bytes) return bytes < o.bytes;
        if (key != o.key) return key > o.key;
        return std::tie(labelA, labelB) > std::tie(o.labelA, o.labelB);
      }
    };
    std::priority_queue<Candidate> queue;
    auto push = [&](int a, int b) {
      const double bytes = groups_[a].bytes.at(b);
      if (bytes <= 0) return;
      const int la = std::min(groups_[a].label, groups_[b].label), lb = std::max(groups_[a].label, groups_[b].label);
      queue.push(Candidate{bytes, mergedKey(a, b), la, lb, a, b});
    };
    for (int a = 0; a < static_cast<int>(groups_.size()); ++a)
      for (const auto& entry : groups_[a].bytes)
        if (entry.first > a) push(a, entry.first);
    while (alive_ > ranks_ && !queue.empty()) {
      const Candidate c = queue.top();
      queue.pop();
      const Group& a = groups_[c.a];
      const Group& b = groups_[c.b];
      if (!a.alive || !b.alive) continue;
      const auto current = a.bytes.find(c.b);
      if (current == a.bytes.end() || current->second != c.bytes) continue;  // superseded by a later entry
      if (!within(a.cpu + b.cpu, capCpu_) || !within(a.gpu + b.gpu, capGpu_)) continue;
      // Keep the slot with more neighbours: the other's neighbours are the ones renamed.
      const bool keepA = a.bytes.size() != b.bytes.size() ? a.bytes.size() > b.bytes.size() : a.label < b.label;
      const int keep = keepA ? c.a : c.b;
      for (int n : merge(keep, keepA ? c.b : c.a)) push(keep, n);
    }
  }

  // Phase 2, where no pipe joins two groups within the caps: the `ranks` heaviest groups stay, and each
  // other group, heaviest first, joins the one whose merged load is least (ties: more bytes between
  // them, then the lower label). The candidates are the lightest kept group and the kept groups it has
  // pipes to.
  void spreadLargestFirst() {
    if (alive_ <= ranks_) return;
    std::vector<int> order;
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g)
      if (groups_[g].alive) order.push_back(g);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const double ka = key(groups_[a]), kb = key(groups_[b]);
      if (ka != kb) return ka > kb;
      return groups_[a].label < groups_[b].label;
    });
    std::vector<char> kept(groups_.size(), 0);
    std::set<std::tuple<double, int, int>> byKey;  // (key, label, slot) of the kept groups
    for (int i = 0; i < ranks_; ++i) {
      kept[order[i]] = 1;
      byKey.emplace(key(groups_[order[i]]), groups_[order[i]].label, order[i]);
    }
    for (std::size_t i = ranks_; i < order.size(); ++i) {
      const int g = order[i];
      std::vector<int> candidates = {std::get<2>(*byKey.begin())};
      for (const auto& entry : groups_[g].bytes)
        if (kept[entry.first]) candidates.push_back(entry.first);
      int best = -1;
      double bestKey = 0, bestBytes = 0;
      for (int k : candidates) {
        const double merged = mergedKey(k, g);
        const auto link = groups_[g].bytes.find(k);
        const double bytes = link == groups_[g].bytes.end() ? 0.0 : link->second;
        if (best < 0 || merged < bestKey ||
            (merged == bestKey &&
             (bytes > bestBytes || (bytes == bestBytes && groups_[k].label < groups_[best].label)))) {
          best = k;
          bestKey = merged;
          bestBytes = bytes;
        }
      }
      byKey.erase({key(groups_[best]), groups_[best].label, best});
      merge(best, g);
      byKey.emplace(key(groups_[best]), groups_[best].label, best);
    }
  }

  const MappingProblem& p_;
  int ranks_;
  std::vector<int>& slotOf_;    // per vertex: its slot while its node is grouped, else -1
  std::vector<int> instances_;  // per slot: its vertex
  std::vector<int> owner_;      // per slot: the group its instance is in now
  std::vector<Group> groups_;
  double capCpu_ = 0, capGpu_ = 0;
  int alive_ = 0;
};

// The rank terms of the cost model (rankCost) for `groups` on node n: the largest, over its ranks, of
// the CPU load over the cores dealt to it and the GPU load. Also the bytes per message of the pipes
// inside ranks.
struct GroupingValue {
  double time = 0;
  double bytesInside = 0;
};
GroupingValue valueOf(const MappingProblem& p, int n, const std::vector<std::vector<int>>& groups,
                      std::vector<int>& groupOf) {
  const ProblemNode& node = p.nodes[n];
  std::vector<double> cpu(groups.size(), 0), gpu(groups.size(), 0);
  std::vector<int> instances;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int v : groups[g]) {
      (p.onGpu(v, n) ? gpu[g] : cpu[g]) += p.weightOn(v, n);
      groupOf[v] = static_cast<int>(g);
    }
    instances.push_back(static_cast<int>(groups[g].size()));
  }
  const std::vector<int> cores = static_cast<int>(groups.size()) <= node.cores ? dealCores(node.cores, cpu, instances)
                                                                               : std::vector<int>(groups.size(), 1);
  GroupingValue value;
  // Per ring on this node: its instances' time and its arcs' hops (inside a rank or between
  // ranks, MappingProblem::hopSeconds), over its tokens: the cost model's loop(l) (loopPeriods), for the
  // part of the loop on this node.
  std::map<int, double> loopTime;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    value.time = std::max(value.time, cpu[g] / cores[g] / node.cpuSpeed);
    if (node.gpus) value.time = std::max(value.time, gpu[g] / node.gpuSpeed);
    for (int v : groups[g]) {
      const int loop = p.ringOf(v);
      if (loop >= 0) loopTime[loop] += vertexTime(p, v, n);
      for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it) {
        if (it->vertex < v || groupOf[it->vertex] < 0) continue;
        const bool sameRank = groupOf[it->vertex] == static_cast<int>(g);
        if (sameRank) value.bytesInside += it->bytes;
        if (loop >= 0 && p.ringOf(it->vertex) == loop) loopTime[loop] += p.hopSeconds(n, n, sameRank);
      }
    }
  }
  for (const auto& [loop, seconds] : loopTime) value.time = std::max(value.time, seconds / p.loopTokens[loop]);
  for (const std::vector<int>& group : groups)
    for (int v : group) groupOf[v] = -1;
  return value;
}

}  // namespace

bool groupRanks(const MappingProblem& p, const std::vector<int>& nodeOf, const RankPolicy& policy, RankLayout& out,
                std::string& error) {
  std::vector<int> targets;
  if (!rankTargets(p, nodeOf, policy, targets, error)) return false;
  std::vector<std::vector<int>> instancesOn(p.nodeCount());
  for (int v = 0; v < p.vertexCount(); ++v) instancesOn[nodeOf[v]].push_back(v);
  std::vector<std::vector<int>> groups;
  std::vector<int> slotOf(p.vertexCount(), -1);
  for (int n = 0; n < p.nodeCount(); ++n) {
    if (instancesOn[n].empty()) continue;
    if (targets[n] >= static_cast<int>(instancesOn[n].size())) {
      for (int v : instancesOn[n]) groups.push_back({v});
      continue;
    }
    // Bytes first, then balance; balance alone (largest-first), which the first can miss when an early
    // merge leaves groups that no longer pack evenly; and, where the node runs part of a feedback loop,
    // the loops kept whole first. The one whose ranks take less time under the cost model wins (loops
    // and the hops they make included, valueOf); at equal time, the one with more bytes inside ranks
    // (ties: in that order).
    using Start = NodeGrouping::Start;
    std::vector<Start> starts = {Start::Bytes, Start::Balance};
    if (std::any_of(instancesOn[n].begin(), instancesOn[n].end(), [&](int v) { return p.loopOfVertex(v) >= 0; }))
      starts.push_back(Start::Loops);
    std::vector<std::vector<int>> best;
    GroupingValue bestValue;
    for (const Start start : starts) {
      std::vector<std::vector<int>> candidate = NodeGrouping(p, n, instancesOn[n], targets[n], slotOf).run(start);
      const GroupingValue value = valueOf(p, n, candidate, slotOf);
      const bool better = best.empty() || (nearlyEqual(value.time, bestValue.time)
                                               ? value.bytesInside > bestValue.bytesInside &&
                                                     !nearlyEqual(value.bytesInside, bestValue.bytesInside)
                                               : value.time < bestValue.time);
      if (better) {
        best = std::move(candidate);
        bestValue = value;
      }
    }
    for (std::vector<int>& g : best) groups.push_back(std::move(g));
  }
  out = rankLayoutOf(p, nodeOf, std::move(groups));
  return true;
}

}  // namespace dispar::streammap
