// What a ProgramSpec means for one rank: which VNODE instance it runs and which ranks each of its port
// ends talks to. Pure functions of the spec, so they are tested without MPI.
#ifndef DISPAR_RUNTIME_PROGRAM_H
#define DISPAR_RUNTIME_PROGRAM_H

#include <dispar/runtime.h>

#include "dispar_lang/LogicalStream.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::rt {

struct InstanceId {
  int vnode;
  int replica;
};

enum class PortRole { Writer, Reader };

/// One port end of an instance: a link to each of its peers (instances, each once). A writer sends its
/// message i to peers[turns[i mod turns.size()]] (to every peer under SplitMode::Duplicate); a reader
/// receives its message i from peers[turns[i mod turns.size()]] in MergeOrder::RoundRobin, from any
/// peer in MergeOrder::Any. Without weights turns is 0, 1, ..., peers.size() - 1.
struct PortPlan {
  int pipe;
  PortRole role;
  std::vector<int> peers;
  std::vector<std::size_t> turns;
  /// Set on the ends of a sequenced pipe (sequencedPipes): every message carries its sequence number.
  /// A writer numbers what it writes before it has read a sequenced message by its own turns: its j-th
  /// message is (j / positions.size()) * cycle + positions[j mod positions.size()].
  struct Sequence {
    std::vector<long long> positions;
    long long cycle = 1;
  };
  std::optional<Sequence> sequence;
};

/// Empty when the spec is consistent; otherwise what is wrong ("pipe 'x' names vnode 7 ...").
std::string validateProgram(const ProgramSpec& program);

/// The message rank 0 prints when the launch size is wrong (without the "dispar: " prefix).
std::string rankCountMismatch(const ProgramSpec& program, int launchedRanks);

/// The reader VNODEs of a pipe, in order: PipeSpec::readerVnodes, or readerVnode alone.
std::vector<int> readerVnodesOf(const PipeSpec& pipe);

/// The instance of reader replica `replica` of a pipe (numbered across its reader VNODEs) of a valid spec.
int readerInstance(const ProgramSpec& program, const PipeSpec& pipe, int replica);

/// The logical-stream rule of a pipe of a valid spec.
lang::LogicalStream logicalStream(const ProgramSpec& program, const PipeSpec& pipe);

/// Which pipes carry sequence numbers (docs/language.md, "Demand"), by pipe: those under split(demand),
/// whose messages reach the reader replicas in an order decided at run time, and those written by a
/// replicated VNODE that reads a sequenced pipe, whose replicas each saw part of that stream. Every
/// message carries the number of the demand-dealt message it came from, so that a reader of several
/// writer replicas merges them back into that order (order(rr)).
std::vector<bool> sequencedPipes(const ProgramSpec& program);

/// `declared` with the pipes a mapping names in `demandPipes` (MapFile::demandPipes) dealt on demand, as
/// split(demand) would (docs/streammap.md, "Demand by default"): each must be a pipe of the program
/// whose dealing the mapping may choose (lang::mayDealOnDemand). `pipes` receives the program's pipes,
/// changed, and `out` is `declared` over them (both must outlive its use). Empty, or what is wrong
/// ("the mapping deals pipe 'p' on demand, but its source gives split(...)").
std::string dealOnDemand(const ProgramSpec& declared, const std::vector<std::string>& demandPipes,
                         std::vector<PipeSpec>& pipes, ProgramSpec& out);

/// The instance rank `rank` runs; nullopt when no VNODE covers it.
std::optional<InstanceId> instanceOfRank(const ProgramSpec& program, int rank);

/// The port ends of `instance`, in pipe order. The spec must be valid.
std::vector<PortPlan> planPorts(const ProgramSpec& program, InstanceId instance);

/// The default window when neither PipeSpec::window nor DISPAR_PIPE_WINDOW gives one.
inline constexpr unsigned kDefaultPipeWindow = 64;

/// Parses DISPAR_PIPE_WINDOW: nullptr or "" gives kDefaultPipeWindow; otherwise a positive integer.
/// On bad text returns nullopt and sets `error`.
std::optional<unsigned> parseWindowSetting(const char* text, std::string& error);

/// The default window of a split(demand) pipe: a reader replica asks for the next message while it
/// works on the current one, and no more, so that a slow replica holds few messages a fast one could
/// take (docs/language.md, "Demand").
inline constexpr unsigned kDefaultDemandWindow = 2;

/// The window of a pipe: its own when non-zero, else under split(demand) kDefaultDemandWindow, else
/// the program-wide one.
inline unsigned effectiveWindow(const PipeSpec& pipe, unsigned programWindow) {
  if (pipe.window != 0) return pipe.window;
  return pipe.split == SplitMode::Demand ? kDefaultDemandWindow : programWindow;
}

/// Messages the reader consumes before it returns one credit to the writer: half the window, so the
/// writer can keep sending while a credit travels back.
inline unsigned creditBatch(unsigned window) { return window >= 2 ? window / 2 : 1; }

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_PROGRAM_H
