#include "streammap/CostModel.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace dispar::streammap {

const char* const kCostModelSummary =
    "t_v = cost / speed (GPU speed for CG on a GPU node, CPU speed otherwise; a vertex using its node's cores "
    "(split_for) on a GPU node: cost / (GPU speed + (cores - 1) * CPU speed)); "
    "cpu(n) = max(max t_v, sum t_v / cores) (one rank per instance, R instances > cores on n: max t_v * R / cores); "
    "gpu(n) = max(max t_v, sum t_v / gpus); "
    "net(n) = sum of crossing edge bytes / bandwidth + latency; "
    "loop(l) = (sum t_v + hop latencies) / tokens over a ring's instances and arcs; "
    "a rank of several instances on n: cpu(n) >= sum of its CPU t_v / "
    "its cores, gpu(n) >= sum of its GPU t_v (one GPU per rank); period = max over nodes and loops; ties: fewer "
    "crossing bytes";

double NodeCost::value() const { return std::max({cpu, gpu, net}); }

const char* NodeCost::dominantTerm() const {
  if (cpu >= gpu && cpu >= net) return "cpu";
  return gpu >= net ? "gpu" : "net";
}

bool nearlyEqual(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-12; }

bool scoreLess(const Score& a, const Score& b) {
  if (!nearlyEqual(a.period, b.period)) return a.period < b.period;
  return !nearlyEqual(a.crossBytes, b.crossBytes) && a.crossBytes < b.crossBytes;
}

// The model's one formula for a node (kCostModelSummary states it).
NodeCost nodeCostOf(const ProblemNode& node, double cpuSum, double cpuMax, double gpuSum, double gpuMax,
                    double netBytes, double netMessages, double oversubscription) {
  NodeCost c;
  c.cpu = std::max(cpuMax * oversubscription, cpuSum / node.cores) / node.cpuSpeed;
  c.gpu = node.gpus ? std::max(gpuMax, gpuSum / node.gpus) / node.gpuSpeed : 0.0;
  c.net = netBytes / node.bandwidth + netMessages * node.latency;
  return c;
}

double vertexTime(const MappingProblem& p, int v, int n) {
  const ProblemNode& node = p.nodes[n];
  return p.weightOn(v, n) / (p.onGpu(v, n) ? node.gpuSpeed : node.cpuSpeed);
}

namespace {

// Per loop, the time of one turn around it: its instances' times and its arcs' hops (0 where not a ring).
std::vector<double> turnSeconds(const MappingProblem& p, const std::vector<int>& nodeOf,
                                const std::vector<int>* rankOf) {
  std::vector<double> seconds(p.loopCount(), 0.0);
  for (int v = 0; v < p.vertexCount(); ++v) {
    const int loop = p.ringOf(v);
    if (loop < 0) continue;
    seconds[loop] += vertexTime(p, v, nodeOf[v]);
    // Each arc once, from its lower end; an arc between two instances of one loop is an arc of the loop.
    for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it)
      if (it->vertex > v && p.ringOf(it->vertex) == loop)
        seconds[loop] +=
            p.hopSeconds(nodeOf[v], nodeOf[it->vertex], rankOf != nullptr && (*rankOf)[v] == (*rankOf)[it->vertex]);
  }
  return seconds;
}

}  // namespace

std::vector<double> loopPeriods(const MappingProblem& p, const std::vector<int>& nodeOf,
                                const std::vector<int>* rankOf) {
  std::vector<double> periods = turnSeconds(p, nodeOf, rankOf);
  for (int loop = 0; loop < p.loopCount(); ++loop) periods[loop] /= p.loopTokens[loop];
  return periods;
}

namespace {

void setPeriod(Evaluation& e) {
  e.score.period = 0;
  for (const NodeCost& c : e.nodes) e.score.period = std::max(e.score.period, c.value());
  for (double loop : e.loops) e.score.period = std::max(e.score.period, loop);
}

}  // namespace

Evaluation evaluate(const MappingProblem& p, const std::vector<int>& nodeOf) {
  const int nodeCount = p.nodeCount();
  std::vector<double> cpuSum(nodeCount, 0), cpuMax(nodeCount, 0), gpuSum(nodeCount, 0), gpuMax(nodeCount, 0),
      netBytes(nodeCount, 0), netMessages(nodeCount, 0);
  std::vector<int> instances(nodeCount, 0);
  for (int v = 0; v < p.vertexCount(); ++v) {
    const int n = nodeOf[v];
    const double w = p.weightOn(v, n);
    ++instances[n];
    if (p.onGpu(v, n)) {
      gpuSum[n] += w;
      gpuMax[n] = std::max(gpuMax[n], w);
    } else {
      cpuSum[n] += w;
      cpuMax[n] = std::max(cpuMax[n], w);
    }
  }
  Evaluation result;
  for (int v = 0; v < p.vertexCount(); ++v) {
    for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it) {
      if (it->vertex < v || nodeOf[it->vertex] == nodeOf[v]) continue;  // each edge once, from its lower end
      for (const int end : {nodeOf[v], nodeOf[it->vertex]}) {
        netBytes[end] += it->bytes;
        netMessages[end] += 1;
      }
      result.score.crossBytes += it->bytes;
    }
  }
  result.nodes.resize(nodeCount);
  for (int n = 0; n < nodeCount; ++n)
    result.nodes[n] = nodeCostOf(p.nodes[n], cpuSum[n], cpuMax[n], gpuSum[n], gpuMax[n], netBytes[n], netMessages[n],
                                 p.oversubscription(n, instances[n]));
  result.loops = loopPeriods(p, nodeOf);
  setPeriod(result);
  return result;
}

RankLayout singletonRanks(const MappingProblem& p, const std::vector<int>& nodeOf) {
  std::vector<std::vector<int>> groups;
  groups.reserve(p.vertexCount());
  for (int v = 0; v < p.vertexCount(); ++v) groups.push_back({v});
  return rankLayoutOf(p, nodeOf, std::move(groups));
}

RankLayout rankLayoutOf(const MappingProblem& p, const std::vector<int>& nodeOf, std::vector<std::vector<int>> groups) {
  for (std::vector<int>& g : groups) std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end(),
            [](const std::vector<int>& a, const std::vector<int>& b) { return a.front() < b.front(); });
  RankLayout layout;
  layout.rankOf.assign(p.vertexCount(), -1);
  for (std::size_t r = 0; r < groups.size(); ++r) {
    for (int v : groups[r]) layout.rankOf[v] = static_cast<int>(r);
    layout.nodeOf.push_back(nodeOf[groups[r].front()]);
  }
  layout.members = std::move(groups);
  dealRankCores(p, layout);
  return layout;
}

namespace {

// Sum of the costs (weights on their node) of rank r's instances on the CPU, and on the GPU.
std::pair<double, double> rankLoads(const MappingProblem& p, const RankLayout& layout, int r) {
  const int n = layout.nodeOf[r];
  double cpu = 0, gpu = 0;
  for (int v : layout.members[r]) (p.onGpu(v, n) ? gpu : cpu) += p.weightOn(v, n);
  return {cpu, gpu};
}

}  // namespace

std::vector<int> dealCores(int nodeCores, const std::vector<double>& cpuLoad, const std::vector<int>& instances) {
  const int ranks = static_cast<int>(cpuLoad.size());
  std::vector<int> cores(ranks, 1);
  int spare = nodeCores - ranks;
  if (spare <= 0) return cores;
  // The next core goes to the rank that needs it most: the largest load per core.
  auto before = [&](int a, int b) {
    const double la = cpuLoad[a] / cores[a], lb = cpuLoad[b] / cores[b];
    if (la != lb) return la < lb;
    const double ta = double(instances[a]) / cores[a], tb = double(instances[b]) / cores[b];
    if (ta != tb) return ta < tb;
    return a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(before)> queue(before);
  for (int r = 0; r < ranks; ++r)
    if (instances[r] > 1) queue.push(r);
  while (spare > 0 && !queue.empty()) {
    const int r = queue.top();
    queue.pop();
    ++cores[r];
    --spare;
    if (cores[r] < instances[r]) queue.push(r);
  }
  return cores;
}

void dealRankCores(const MappingProblem& p, RankLayout& layout) {
  const int rankCount = layout.rankCount();
  layout.cores.assign(rankCount, 1);
  std::vector<std::vector<int>> ranksOn(p.nodeCount());
  for (int r = 0; r < rankCount; ++r) ranksOn[layout.nodeOf[r]].push_back(r);
  for (int n = 0; n < p.nodeCount(); ++n) {
    if (ranksOn[n].size() >= static_cast<std::size_t>(p.nodes[n].cores)) continue;  // one core each
    std::vector<double> cpuLoad;
    std::vector<int> instances;
    for (int r : ranksOn[n]) {
      cpuLoad.push_back(rankLoads(p, layout, r).first);
      instances.push_back(static_cast<int>(layout.members[r].size()));
    }
    const std::vector<int> cores = dealCores(p.nodes[n].cores, cpuLoad, instances);
    for (std::size_t i = 0; i < cores.size(); ++i) layout.cores[ranksOn[n][i]] = cores[i];
  }
}

NodeCost rankCost(const MappingProblem& p, const RankLayout& layout, int r) {
  const ProblemNode& node = p.nodes[layout.nodeOf[r]];
  const auto [cpu, gpu] = rankLoads(p, layout, r);
  NodeCost c;
  c.cpu = cpu / layout.cores[r] / node.cpuSpeed;
  c.gpu = node.gpus ? gpu / node.gpuSpeed : 0.0;
  return c;
}

Evaluation evaluate(const MappingProblem& p, const std::vector<int>& nodeOf, const RankLayout& layout) {
  Evaluation result = evaluate(p, nodeOf);
  for (int r = 0; r < layout.rankCount(); ++r) {
    if (layout.members[r].size() < 2) continue;  // one instance: t_v, which its node's max t_v term holds
    NodeCost& node = result.nodes[layout.nodeOf[r]];
    const NodeCost rank = rankCost(p, layout, r);
    node.cpu = std::max(node.cpu, rank.cpu);
    node.gpu = std::max(node.gpu, rank.gpu);
  }
  result.loops = loopPeriods(p, nodeOf, &layout.rankOf);
  setPeriod(result);
  return result;
}

IncrementalCost::IncrementalCost(const MappingProblem& p, std::vector<int> nodeOf)
    : p_(p), nodeOf_(std::move(nodeOf)), loads_(p.nodeCount()), values_(p.nodeCount(), 0) {
  for (int v = 0; v < p.vertexCount(); ++v) {
    Load& load = loads_[nodeOf_[v]];
    const double w = p.weightOn(v, nodeOf_[v]);
    if (p.onGpu(v, nodeOf_[v])) {
      load.gpuSum += w;
      load.gpuCosts.insert(w);
    } else {
      load.cpuSum += w;
      load.cpuCosts.insert(w);
    }
    for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it) {
      if (nodeOf_[it->vertex] == nodeOf_[v]) continue;
      load.netBytes += it->bytes;
      load.netMessages += 1;
      if (it->vertex > v) crossBytes_ += it->bytes;
    }
  }
  for (int n = 0; n < p.nodeCount(); ++n) {
    values_[n] = nodeCost(n).value();
    byValueAt_.push_back(byValue_.emplace(values_[n], n).first);
    gpuByValueAt_.push_back(p.nodes[n].hasGpu() ? gpuByValue_.emplace(values_[n], n).first : gpuByValue_.end());
  }
  loopSeconds_ = turnSeconds(p, nodeOf_, nullptr);
  for (int loop = 0; loop < p.loopCount(); ++loop)
    loopAt_.push_back(loopsByValue_.emplace(loopSeconds_[loop] / p.loopTokens[loop], loop).first);
}

Score IncrementalCost::score() const {
  const double loops = loopsByValue_.empty() ? 0.0 : loopsByValue_.rbegin()->first;
  return Score{std::max(byValue_.rbegin()->first, loops), crossBytes_};
}

int IncrementalCost::bottleneckLoop() const {
  if (loopsByValue_.empty() || loopsByValue_.rbegin()->first <= byValue_.rbegin()->first) return -1;
  return loopsByValue_.rbegin()->second;
}

NodeCost IncrementalCost::costOf(int n, const Delta& d) const {
  return nodeCostOf(p_.nodes[n], d.cpuSum, d.cpuMax, d.gpuSum, d.gpuMax, d.netBytes, d.netMessages,
                    p_.oversubscription(n, d.instances));
}

NodeCost IncrementalCost::nodeCost(int n) const {
  const Load& l = loads_[n];
  const Delta now{n,
                  l.cpuCosts.empty() ? 0.0 : l.cpuSum,
                  l.gpuCosts.empty() ? 0.0 : l.gpuSum,
                  l.cpuCosts.empty() ? 0.0 : l.cpuCosts.largest(),
                  l.gpuCosts.empty() ? 0.0 : l.gpuCosts.largest(),
                  l.netBytes,
                  l.netMessages,
                  static_cast<int>(l.cpuCosts.size() + l.gpuCosts.size())};
  return costOf(n, now);
}

// Largest element of `costs` after removing one `removed` (when >= 0) and adding `added` (when >= 0).
double IncrementalCost::maxCost(const SortedCosts& costs, double removed, double added) const {
  double largest = 0;
  if (!costs.empty()) {
    if (removed >= 0 && costs.largest() == removed) {
      if (costs.size() > 1) largest = costs.secondLargest();
    } else {
      largest = costs.largest();
    }
  }
  return std::max(largest, added);
}

double IncrementalCost::maxExcept(int a, int b) const {
  for (auto it = byValue_.rbegin(); it != byValue_.rend(); ++it)
    if (it->second != a && it->second != b) return it->first;
  return 0.0;
}

double IncrementalCost::loopMaxExcept(int a, int b) const {
  for (auto it = loopsByValue_.rbegin(); it != loopsByValue_.rend(); ++it)
    if (it->second != a && it->second != b) return it->first;
  return 0.0;
}

double IncrementalCost::loopDelta(int v, int from, int to, int partner) const {
  const int loop = p_.ringOf(v);
  double delta = vertexTime(p_, v, to) - vertexTime(p_, v, from);
  for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v); ++it) {
    // The arcs between swapped partners join the same two nodes before and after.
    if (it->vertex == partner || p_.ringOf(it->vertex) != loop) continue;
    const int other = nodeOf_[it->vertex];
    delta += p_.hopSeconds(to, other, false) - p_.hopSeconds(from, other, false);
  }
  return delta;
}

Score IncrementalCost::evaluatePair(const Delta& da, const Delta& db, double crossDelta, LoopChange first,
                                    LoopChange second, double* touchedMax) const {
  const double va = costOf(da.node, da).value();
  const double vb = costOf(db.node, db).value();
  if (touchedMax) *touchedMax = std::max(va, vb);
  double period = std::max({maxExcept(da.node, db.node), va, vb, loopMaxExcept(first.loop, second.loop)});
  for (const LoopChange& change : {first, second})
    if (change.loop >= 0) period = std::max(period, change.seconds / p_.loopTokens[change.loop]);
  return Score{period, crossBytes_ + crossDelta};
}

namespace {

// Sum after removing/adding, snapped to zero when the node's bucket becomes empty (no drift).
double adjustedSum(double sum, std::size_t count, double removed, double added) {
  std::size_t after = count - (removed >= 0) + (added >= 0);
  if (after == 0) return 0.0;
  return sum - (removed >= 0 ? removed : 0.0) + (added >= 0 ? added : 0.0);
}

}  // namespace

Score IncrementalCost::scoreAfterMove(int v, int to, double* touchedMax) const {
  const int from = nodeOf_[v];
  const double wa = p_.weightOn(v, from), wb = p_.weightOn(v, to);
  const Load& la = loads_[from];
  const Load& lb = loads_[to];
  const bool gpuA = p_.onGpu(v, from), gpuB = p_.onGpu(v, to);
  const int countA = static_cast<int>(la.cpuCosts.size() + la.gpuCosts.size());
  const int countB = static_cast<int>(lb.cpuCosts.size() + lb.gpuCosts.size());
  Delta da{from, 0, 0, 0, 0, la.netBytes, la.netMessages, countA - 1};
  Delta db{to, 0, 0, 0, 0, lb.netBytes, lb.netMessages, countB + 1};
  da.cpuSum = adjustedSum(la.cpuSum, la.cpuCosts.size(), gpuA ? -1 : wa, -1);
  da.cpuMax = maxCost(la.cpuCosts, gpuA ? -1 : wa, -1);
  da.gpuSum = adjustedSum(la.gpuSum, la.gpuCosts.size(), gpuA ? wa : -1, -1);
  da.gpuMax = maxCost(la.gpuCosts, gpuA ? wa : -1, -1);
  db.cpuSum = adjustedSum(lb.cpuSum, lb.cpuCosts.size(), -1, gpuB ? -1 : wb);
  db.cpuMax = maxCost(lb.cpuCosts, -1, gpuB ? -1 : wb);
  db.gpuSum = adjustedSum(lb.gpuSum, lb.gpuCosts.size(), -1, gpuB ? wb : -1);
  db.gpuMax = maxCost(lb.gpuCosts, -1, gpuB ? wb : -1);
  double crossDelta = 0;
  for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v); ++it) {
    const int c = nodeOf_[it->vertex];
    const double sign = c == from ? 1 : c == to ? -1 : 0;  // the edge starts crossing, stops, or moves end
    da.netBytes += (c == from ? 1 : -1) * it->bytes;
    da.netMessages += c == from ? 1 : -1;
    db.netBytes += (c == to ? -1 : 1) * it->bytes;
    db.netMessages += c == to ? -1 : 1;
    crossDelta += sign * it->bytes;
  }
  LoopChange loop;
  if (const int l = p_.ringOf(v); l >= 0) loop = {l, loopSeconds_[l] + loopDelta(v, from, to, -1)};
  return evaluatePair(da, db, crossDelta, loop, LoopChange{}, touchedMax);
}

Score IncrementalCost::scoreAfterSwap(int u, int v, double* touchedMax) const {
  const int a = nodeOf_[u], b = nodeOf_[v];
  // Each vertex's weight where it is and where it goes (they differ for a vertex using its node's cores).
  const double wuA = p_.weightOn(u, a), wuB = p_.weightOn(u, b), wvA = p_.weightOn(v, a), wvB = p_.weightOn(v, b);
  const Load& la = loads_[a];
  const Load& lb = loads_[b];
  const bool uOnA = p_.onGpu(u, a), vOnA = p_.onGpu(v, a), uOnB = p_.onGpu(u, b), vOnB = p_.onGpu(v, b);
  Delta da{a, 0, 0, 0, 0, la.netBytes, la.netMessages, static_cast<int>(la.cpuCosts.size() + la.gpuCosts.size())};
  Delta db{b, 0, 0, 0, 0, lb.netBytes, lb.netMessages, static_cast<int>(lb.cpuCosts.size() + lb.gpuCosts.size())};
  da.cpuSum = adjustedSum(la.cpuSum, la.cpuCosts.size(), uOnA ? -1 : wuA, vOnA ? -1 : wvA);
  da.cpuMax = maxCost(la.cpuCosts, uOnA ? -1 : wuA, vOnA ? -1 : wvA);
  da.gpuSum = adjustedSum(la.gpuSum, la.gpuCosts.size(), uOnA ? wuA : -1, vOnA ? wvA : -1);
  da.gpuMax = maxCost(la.gpuCosts, uOnA ? wuA : -1, vOnA ? wvA : -1);
  db.cpuSum = adjustedSum(lb.cpuSum, lb.cpuCosts.size(), vOnB ? -1 : wvB, uOnB ? -1 : wuB);
  db.cpuMax = maxCost(lb.cpuCosts, vOnB ? -1 : wvB, uOnB ? -1 : wuB);
  db.gpuSum = adjustedSum(lb.gpuSum, lb.gpuCosts.size(), vOnB ? wvB : -1, uOnB ? wuB : -1);
  db.gpuMax = maxCost(lb.gpuCosts, vOnB ? wvB : -1, uOnB ? wuB : -1);
  double crossDelta = 0;
  // u goes a -> b and v goes b -> a; the u-v edges keep crossing.
  auto account = [&](int x, int other, int from, int to, Delta& dFrom, Delta& dTo) {
    for (const Neighbour* it = p_.neighboursBegin(x); it != p_.neighboursEnd(x); ++it) {
      if (it->vertex == other) continue;
      const int c = nodeOf_[it->vertex];
      dFrom.netBytes += (c == from ? 1 : -1) * it->bytes;
      dFrom.netMessages += c == from ? 1 : -1;
      dTo.netBytes += (c == to ? -1 : 1) * it->bytes;
      dTo.netMessages += c == to ? -1 : 1;
      crossDelta += (c == from ? 1 : c == to ? -1 : 0) * it->bytes;
    }
  };
  account(u, v, a, b, da, db);
  account(v, u, b, a, db, da);
  LoopChange first, second;
  const int lu = p_.ringOf(u), lv = p_.ringOf(v);
  if (lu >= 0) first = {lu, loopSeconds_[lu] + loopDelta(u, a, b, v)};
  if (lv >= 0 && lv == lu)
    first.seconds += loopDelta(v, b, a, u);
  else if (lv >= 0)
    second = {lv, loopSeconds_[lv] + loopDelta(v, b, a, u)};
  return evaluatePair(da, db, crossDelta, first, second, touchedMax);
}

void IncrementalCost::removeVertex(int v) {
  const int n = nodeOf_[v];
  Load& l = loads_[n];
  const double w = p_.weightOn(v, n);
  SortedCosts& costs = p_.onGpu(v, n) ? l.gpuCosts : l.cpuCosts;
  double& sum = p_.onGpu(v, n) ? l.gpuSum : l.cpuSum;
  costs.erase(w);
  sum = costs.empty() ? 0.0 : sum - w;
  for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v); ++it) {
    const int c = nodeOf_[it->vertex];
    if (c == n || c < 0) continue;  // c < 0: the other end of a swap, already taken out
    for (Load* end : {&l, &loads_[c]}) {
      end->netBytes -= it->bytes;
      end->netMessages -= 1;
    }
    crossBytes_ -= it->bytes;
  }
  nodeOf_[v] = -1;
}

void IncrementalCost::addVertex(int v, int n) {
  Load& l = loads_[n];
  const double w = p_.weightOn(v, n);
  (p_.onGpu(v, n) ? l.gpuCosts : l.cpuCosts).insert(w);
  (p_.onGpu(v, n) ? l.gpuSum : l.cpuSum) += w;
  nodeOf_[v] = n;
  for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v); ++it) {
    const int c = nodeOf_[it->vertex];
    if (c == n || c < 0) continue;
    for (Load* end : {&l, &loads_[c]}) {
      end->netBytes += it->bytes;
      end->netMessages += 1;
    }
    crossBytes_ += it->bytes;
  }
}

namespace {

// Re-inserts the same tree node (no allocation) with the old position as hint: most moves change a
// value a little.
void reinsert(std::set<std::pair<double, int>>& set, std::set<std::pair<double, int>>::iterator& at, double value) {
  const auto hint = std::next(at);
  auto handle = set.extract(at);
  handle.value().first = value;
  at = set.insert(hint, std::move(handle));
}

}  // namespace

void IncrementalCost::setValue(int n) {
  const double value = nodeCost(n).value();
  if (value == values_[n]) return;
  values_[n] = value;
  reinsert(byValue_, byValueAt_[n], value);
  if (p_.nodes[n].hasGpu()) reinsert(gpuByValue_, gpuByValueAt_[n], value);
}

void IncrementalCost::setLoopSeconds(int loop, double seconds) {
  loopSeconds_[loop] = seconds;
  reinsert(loopsByValue_, loopAt_[loop], seconds / p_.loopTokens[loop]);
}

void IncrementalCost::move(int v, int to) {
  const int from = nodeOf_[v];
  if (const int loop = p_.ringOf(v); loop >= 0) setLoopSeconds(loop, loopSeconds_[loop] + loopDelta(v, from, to, -1));
  removeVertex(v);
  addVertex(v, to);
  setValue(from);
  setValue(to);
}

void IncrementalCost::swap(int u, int v) {
  const int a = nodeOf_[u], b = nodeOf_[v];
  const int lu = p_.ringOf(u), lv = p_.ringOf(v);
  const double du = lu >= 0 ? loopDelta(u, a, b, v) : 0.0, dv = lv >= 0 ? loopDelta(v, b, a, u) : 0.0;
  if (lu >= 0) setLoopSeconds(lu, loopSeconds_[lu] + du);
  if (lv >= 0) setLoopSeconds(lv, loopSeconds_[lv] + dv);
  removeVertex(u);
  removeVertex(v);
  addVertex(u, b);
  addVertex(v, a);
  setValue(a);
  setValue(b);
}

}  // namespace dispar::streammap
