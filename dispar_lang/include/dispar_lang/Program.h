// The program model the frontend extracts from a .dsp file and StreamCC lowers.
#ifndef DISPAR_LANG_PROGRAM_H
#define DISPAR_LANG_PROGRAM_H

#include "dispar_lang/LogicalStream.h"
#include "dispar_lang/Rtg.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::lang {

struct SourceLocation {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string str() const;  // "file:line:col"
};

enum class MergeOrder { RoundRobin, Any };
enum class PortDirection { In, Out };

struct PortRef {
  std::string pipe;
  PortDirection direction = PortDirection::In;
  int pipeIndex = -1;  // into ProgramModel::pipes
};

struct VnodeModel {
  std::string name;            // "stage[3]" for a member of a VNODE_ARRAY
  std::string functionName;    // qualified: ::dispar_vnode_<name>_L<line> (::dispar_vnode_array_<family>_L<line>)
  std::string family;          // the VNODE_ARRAY's name; empty for a VNODE
  int member = -1;             // the member's index in its family; -1 for a VNODE
  std::vector<PortRef> ports;  // in declaration order (the function's parameter order)
  int replicas = 1;
  double cost = 1.0;
  bool costDeclared = false;  // cost(W) given
  std::optional<std::uint64_t> memoryBytes;
  Requirement requirement = Requirement::CO;
  bool requirementDeclared = false;  // from resource(...), not inferred
  bool usesNodeCores = false;        // calls dispar::split_for (directly or through the file's functions)
  std::string fingerprint;           // hash of its code and the code it calls (docs/language.md)
  CodeFeatures features;             // static features of that code (docs/language.md, "Code features")
  SourceLocation location;
};

struct PipeModel {
  std::string name;           // "chain[3]" for an element of a PIPE_ARRAY
  std::string qualifiedName;  // ::name, or ::ns::name (of the array, for an element)
  int index = -1;             // the element's index in its PIPE_ARRAY; -1 for a PIPE
  std::string elementType;
  std::uint64_t elementBytes = 0;
  int writer = -1;           // vnode index
  std::vector<int> readers;  // vnode indices, in source order: one, or several under a split clause
  std::optional<std::uint64_t> volume;
  MergeOrder order = MergeOrder::RoundRobin;
  SplitMode split = SplitMode::RoundRobin;
  bool splitDeclared = false;     // a split(...) clause was written (it allows several reader VNODEs)
  std::vector<int> splitWeights;  // split(rr(w...)): one per reader replica; empty: all 1
  std::vector<int> joinWeights;   // join(rr(v...)): one per writer replica; empty: all 1
  unsigned window = 0;            // 0: runtime default
  int initial = 0;                // initial(N): value-initialised elements the pipe starts with
  SourceLocation location;
};

struct KernelModel {
  std::string name;
  SourceLocation location;
};

struct LaunchSiteModel {
  std::string kernel;
  std::string enclosingFunction;
  SourceLocation location;
};

/// The C++ expression naming a pipe or an element: ::chain[3].
inline std::string pipeExpression(const PipeModel& pipe) {
  return pipe.index < 0 ? pipe.qualifiedName : pipe.qualifiedName + "[" + std::to_string(pipe.index) + "]";
}

/// The sizes a program may declare (docs/language.md, "Limits"). The frontend reports a declaration beyond
/// them instead of expanding a graph that would exhaust memory (a PIPE_ARRAY of 2^31 elements took 8 GB
/// before failing); within them a program compiles in seconds to a minute.
struct GraphLimits {
  static constexpr int kMaxFamilyMembers = 1 << 16;  // elements of one PIPE_ARRAY, members of one VNODE_ARRAY
  static constexpr int kMaxVnodes = 1 << 18;         // VNODEs of a program, each family member counted
  static constexpr int kMaxPipes = 1 << 18;          // pipes of a program, each PIPE_ARRAY element counted
};

struct ProgramModel {
  std::string name;                // program name (output stem)
  std::string sourceFile;          // the .dsp path as given
  bool isCuda = false;             // parsed as CUDA
  std::vector<VnodeModel> vnodes;  // in source order: this order assigns ranks
  std::vector<PipeModel> pipes;    // in source order
  std::vector<KernelModel> kernels;
  std::vector<LaunchSiteModel> launches;

  int findVnode(const std::string& name) const;
  int findPipe(const std::string& name) const;
  /// Ranks: VNODEs in source order, each VNODE's replicas on consecutive ranks.
  int firstRank(int vnode) const;
  int rankCount() const;
};

/// The logical-stream rule of a pipe whose two ends are known.
LogicalStream logicalStream(const ProgramModel& program, const PipeModel& pipe);

/// The replica counts of a pipe's reader VNODEs, in order (readerOfReplica numbers replicas across them).
std::vector<int> readerReplicaCounts(const ProgramModel& program, const PipeModel& pipe);

/// One vertex per VNODE instance; edges follow the replica wiring of docs/language.md.
Rtg buildRtg(const ProgramModel& program, const std::vector<std::string>& cudaArchs);

}  // namespace dispar::lang

#endif
