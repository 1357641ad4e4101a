#include "Program.h"

#include "dispar_lang/LogicalStream.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <numeric>

namespace dispar::rt {
namespace {

std::string quoted(const char* text) { return std::string("'") + (text ? text : "(null)") + "'"; }

/// The instances `instanceOf` gives for the replicas in `cycle`, each once, and the turns that index them.
template <class InstanceOf>
void linkTo(const std::vector<int>& cycle, InstanceOf instanceOf, PortPlan& plan) {
  const std::vector<int> distinct = lang::distinctInOrder(cycle);
  for (int replica : distinct) plan.peers.push_back(instanceOf(replica));
  for (int replica : cycle)
    plan.turns.push_back(
        static_cast<std::size_t>(std::find(distinct.begin(), distinct.end(), replica) - distinct.begin()));
}

std::vector<int> replicaCounts(const ProgramSpec& program, const std::vector<int>& vnodes) {
  std::vector<int> counts;
  for (int v : vnodes) counts.push_back(program.vnodes[v].replicas);
  return counts;
}

std::vector<int> weights(const int* table, int count) {
  return table == nullptr ? std::vector<int>{} : std::vector<int>(table, table + count);
}

}  // namespace

std::string validateProgram(const ProgramSpec& program) {
  if (program.vnodeCount <= 0 || program.vnodes == nullptr) return "program has no vnodes";
  if (program.pipeCount < 0 || (program.pipeCount > 0 && program.pipes == nullptr))
    return "program's pipe table is missing";
  int nextRank = 0;
  for (int v = 0; v < program.vnodeCount; ++v) {
    const VnodeSpec& vnode = program.vnodes[v];
    if (vnode.name == nullptr) return "vnode " + std::to_string(v) + " has no name";
    if (vnode.replicas < 1)
      return "vnode " + quoted(vnode.name) + " has " + std::to_string(vnode.replicas) + " replicas (at least 1 needed)";
    // Ranks are laid out VNODE after VNODE, replicas consecutive.
    if (vnode.firstRank != nextRank)
      return "vnode " + quoted(vnode.name) + " starts at rank " + std::to_string(vnode.firstRank) + " but rank " +
             std::to_string(nextRank) + " is next";
    nextRank += vnode.replicas;
  }
  if (program.rankCount != nextRank)
    return "rank count " + std::to_string(program.rankCount) + " differs from the vnodes' replica total " +
           std::to_string(nextRank);
  for (int p = 0; p < program.pipeCount; ++p) {
    const PipeSpec& pipe = program.pipes[p];
    const std::string name = pipe.name ? quoted(pipe.name) : std::to_string(p);
    auto validVnode = [&](int v) { return v >= 0 && v < program.vnodeCount; };
    if (!validVnode(pipe.writerVnode) || !validVnode(pipe.readerVnode))
      return "pipe " + name + " names a vnode outside 0.." + std::to_string(program.vnodeCount - 1);
    if (pipe.readerVnodeCount < 0 || (pipe.readerVnodeCount > 0 && pipe.readerVnodes == nullptr) ||
        (pipe.readerVnodeCount > 0 && pipe.readerVnodes[0] != pipe.readerVnode))
      return "pipe " + name + "'s reader table does not start with its reader";
    const std::vector<int> readers = readerVnodesOf(pipe);
    for (std::size_t k = 0; k < readers.size(); ++k) {
      if (!validVnode(readers[k]))
        return "pipe " + name + " names a vnode outside 0.." + std::to_string(program.vnodeCount - 1);
      if (readers[k] == pipe.writerVnode) return "pipe " + name + " has the same vnode at both ends";
      if (std::find(readers.begin(), readers.begin() + static_cast<std::ptrdiff_t>(k), readers[k]) !=
          readers.begin() + static_cast<std::ptrdiff_t>(k))
        return "pipe " + name + " names reader vnode " + quoted(program.vnodes[readers[k]].name) + " twice";
    }
    if (pipe.elementBytes == 0) return "pipe " + name + " has zero-byte elements";
    if (pipe.split != SplitMode::RoundRobin && pipe.split != SplitMode::Duplicate && pipe.split != SplitMode::Demand)
      return "pipe " + name + " has an unknown split mode";
    if (pipe.initialCount < 0 || (pipe.initialCount > 0 && pipe.initialValue == nullptr))
      return "pipe " + name + " has " + std::to_string(pipe.initialCount) + " initial elements but no initial value";
    const lang::LogicalStream stream = logicalStream(program, pipe);
    if (std::string problem = stream.check(); !problem.empty()) return "pipe " + name + ": " + problem;
    if (std::string problem = stream.checkInitial(pipe.initialCount); !problem.empty())
      return "pipe " + name + ": " + problem;
  }
  return {};
}

std::string rankCountMismatch(const ProgramSpec& program, int launchedRanks) {
  std::string message = std::string(program.program ? program.program : "program") + " was launched with " +
                        std::to_string(launchedRanks) + (launchedRanks == 1 ? " rank" : " ranks") + " but needs " +
                        std::to_string(program.rankCount) + " (one per VNODE instance: ";
  for (int v = 0; v < program.vnodeCount; ++v) {
    if (v != 0) message += ", ";
    message += std::string(program.vnodes[v].name) + " " + std::to_string(program.vnodes[v].replicas);
  }
  return message + ")";
}

std::string dealOnDemand(const ProgramSpec& declared, const std::vector<std::string>& demandPipes,
                         std::vector<PipeSpec>& pipes, ProgramSpec& out) {
  pipes.assign(declared.pipes, declared.pipes + declared.pipeCount);
  out = declared;
  out.pipes = pipes.data();
  for (const std::string& name : demandPipes) {
    const auto pipe = std::find_if(pipes.begin(), pipes.end(), [&](const PipeSpec& p) { return name == p.name; });
    if (pipe == pipes.end()) return "the mapping deals pipe '" + name + "' on demand, but the program has no such pipe";
    const std::vector<int> readers = readerVnodesOf(*pipe);
    if (!lang::mayDealOnDemand(pipe->split == SplitMode::RoundRobin && pipe->splitWeights == nullptr,
                               pipe->splitDeclared, static_cast<int>(readers.size()),
                               declared.vnodes[readers.front()].replicas, pipe->initialCount))
      return "the mapping deals pipe '" + name +
             "' on demand, but its source decides its dealing (a split clause, initial(N), or fewer than two "
             "reader replicas); map the program again";
    pipe->split = SplitMode::Demand;
  }
  return {};
}

std::optional<InstanceId> instanceOfRank(const ProgramSpec& program, int rank) {
  for (int v = 0; v < program.vnodeCount; ++v) {
    const VnodeSpec& vnode = program.vnodes[v];
    if (rank >= vnode.firstRank && rank < vnode.firstRank + vnode.replicas)
      return InstanceId{v, rank - vnode.firstRank};
  }
  return std::nullopt;
}

std::vector<int> readerVnodesOf(const PipeSpec& pipe) {
  if (pipe.readerVnodeCount > 0) return std::vector<int>(pipe.readerVnodes, pipe.readerVnodes + pipe.readerVnodeCount);
  return {pipe.readerVnode};
}

int readerInstance(const ProgramSpec& program, const PipeSpec& pipe, int replica) {
  const std::vector<int> readers = readerVnodesOf(pipe);
  const auto [which, own] = lang::readerOfReplica(replicaCounts(program, readers), replica);
  return program.vnodes[readers[which]].firstRank + own;
}

lang::LogicalStream logicalStream(const ProgramSpec& program, const PipeSpec& pipe) {
  const int writers = program.vnodes[pipe.writerVnode].replicas;
  const std::vector<int> counts = replicaCounts(program, readerVnodesOf(pipe));
  const int readers = std::accumulate(counts.begin(), counts.end(), 0);
  const lang::SplitMode split = pipe.split == SplitMode::Duplicate ? lang::SplitMode::Duplicate
                                : pipe.split == SplitMode::Demand  ? lang::SplitMode::Demand
                                                                   : lang::SplitMode::RoundRobin;
  return lang::LogicalStream(writers, readers, split, weights(pipe.splitWeights, readers),
                             weights(pipe.joinWeights, writers));
}

std::vector<bool> sequencedPipes(const ProgramSpec& program) {
  std::vector<bool> sequenced(static_cast<std::size_t>(program.pipeCount), false);
  std::vector<bool> fed(static_cast<std::size_t>(program.vnodeCount), false);  // reads a sequenced pipe
  // A fixpoint: a feedback loop may carry the numbers back to where they started.
  for (bool changed = true; changed;) {
    changed = false;
    for (int p = 0; p < program.pipeCount; ++p) {
      const PipeSpec& pipe = program.pipes[p];
      const bool writerFed =
          fed[static_cast<std::size_t>(pipe.writerVnode)] && program.vnodes[pipe.writerVnode].replicas > 1;
      if (sequenced[static_cast<std::size_t>(p)] || (pipe.split != SplitMode::Demand && !writerFed)) continue;
      sequenced[static_cast<std::size_t>(p)] = true;
      for (int reader : readerVnodesOf(pipe)) fed[static_cast<std::size_t>(reader)] = true;
      changed = true;
    }
  }
  return sequenced;
}

std::vector<PortPlan> planPorts(const ProgramSpec& program, InstanceId instance) {
  std::vector<PortPlan> plans;
  const std::vector<bool> sequenced = sequencedPipes(program);
  for (int p = 0; p < program.pipeCount; ++p) {
    const PipeSpec& pipe = program.pipes[p];
    const std::vector<int> readers = readerVnodesOf(pipe);
    const auto reading = std::find(readers.begin(), readers.end(), instance.vnode);
    if (pipe.writerVnode == instance.vnode) {
      PortPlan& plan = plans.emplace_back(PortPlan{p, PortRole::Writer, {}, {}, std::nullopt});
      const lang::LogicalStream stream = logicalStream(program, pipe);
      linkTo(
          stream.writerPeers(instance.replica), [&](int replica) { return readerInstance(program, pipe, replica); },
          plan);
      if (sequenced[static_cast<std::size_t>(p)]) {
        plan.sequence.emplace();
        plan.sequence->positions = stream.writerPositions(instance.replica);
        plan.sequence->cycle = stream.joinCycle();
      }
    } else if (reading != readers.end()) {
      // This instance's replica number across the pipe's reader VNODEs.
      const int replica = lang::replicaAcrossReaders(
          replicaCounts(program, readers), static_cast<std::size_t>(reading - readers.begin()), instance.replica);
      PortPlan& plan = plans.emplace_back(PortPlan{p, PortRole::Reader, {}, {}, std::nullopt});
      linkTo(
          logicalStream(program, pipe).readerPeers(replica),
          [&](int writer) { return program.vnodes[pipe.writerVnode].firstRank + writer; }, plan);
      if (sequenced[static_cast<std::size_t>(p)]) plan.sequence.emplace();
    }
  }
  return plans;
}

std::optional<unsigned> parseWindowSetting(const char* text, std::string& error) {
  if (text == nullptr || *text == '\0') return kDefaultPipeWindow;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 || value > INT_MAX) {
    error = std::string("DISPAR_PIPE_WINDOW must be a positive integer, got '") + text + "'";
    return std::nullopt;
  }
  return static_cast<unsigned>(value);
}

}  // namespace dispar::rt
