#include "streamcc/CodeGenerator.h"

#include <algorithm>
#include <sstream>

namespace dispar::streamcc {

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

int countLines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// Emits text while tracking the output line, so #line can restore the generated file's own numbering.
class Emitter {
 public:
  Emitter& operator<<(const std::string& text) {
    out_ << text;
    line_ += countLines(text);
    return *this;
  }
  Emitter& operator<<(long long value) { return *this << std::to_string(value); }
  void resumeGeneratedLines(const std::string& generatedName) {
    // #line N names the line that follows the directive.
    *this << "#line " << static_cast<long long>(line_ + 2) << " " << quoted(generatedName) << "\n";
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int line_ = 0;
};

void emitSpecs(Emitter& out, const lang::ProgramModel& program) {
  out << "const ::dispar::rt::VnodeSpec kDisparVnodes[] = {\n";
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    const lang::VnodeModel& vnode = program.vnodes[v];
    out << "    {" << quoted(vnode.name) << ", " << static_cast<long long>(program.firstRank(static_cast<int>(v)))
        << ", " << static_cast<long long>(vnode.replicas) << ", " << quoted(vnode.location.str()) << ", "
        << (vnode.requirement == lang::Requirement::CG ? "true" : "false") << ", " << quoted(vnode.fingerprint)
        << "},\n";
  }
  out << "};\n";
  if (program.pipes.empty()) {
    out << "const ::dispar::rt::PipeSpec* const kDisparPipes = nullptr;\n";
  } else {
    // Weights of split(rr(...)) / join(rr(...)), and the reader VNODEs of a pipe several read: an int table
    // each (named `name`; "nullptr" when empty).
    auto intTable = [&](const std::vector<int>& values, const std::string& name) {
      if (values.empty()) return std::string("nullptr");
      out << "const int " << name << "[] = {";
      for (std::size_t k = 0; k < values.size(); ++k) out << (k == 0 ? "" : ", ") << static_cast<long long>(values[k]);
      out << "};\n";
      return name;
    };
    std::vector<std::pair<std::string, std::string>> weightNames;
    std::vector<std::string> readerNames;  // pipes read by several VNODEs: their table
    for (std::size_t p = 0; p < program.pipes.size(); ++p) {
      const lang::PipeModel& pipe = program.pipes[p];
      weightNames.emplace_back(intTable(pipe.splitWeights, "kDisparSplitWeights" + std::to_string(p)),
                               intTable(pipe.joinWeights, "kDisparJoinWeights" + std::to_string(p)));
      readerNames.push_back(pipe.readers.size() > 1 ? intTable(pipe.readers, "kDisparReaders" + std::to_string(p))
                                                    : std::string("nullptr"));
      // initial(N): the element the pipe starts with N copies of, value-initialised as T{} is.
      if (pipe.initial > 0)
        out << "const decltype(" << pipe.qualifiedName << ")::element_type kDisparInitial" << p << "{};\n";
    }
    out << "const ::dispar::rt::PipeSpec kDisparPipes[] = {\n";
    for (std::size_t p = 0; p < program.pipes.size(); ++p) {
      const lang::PipeModel& pipe = program.pipes[p];
      out << "    {" << quoted(pipe.name) << ", " << quoted(pipe.elementType) << ", sizeof(decltype("
          << pipe.qualifiedName << ")::element_type), " << static_cast<long long>(pipe.writer) << ", "
          << static_cast<long long>(pipe.readers.empty() ? -1 : pipe.readers[0]) << ", "
          << (pipe.order == lang::MergeOrder::Any ? "::dispar::rt::MergeOrder::Any"
                                                  : "::dispar::rt::MergeOrder::RoundRobin")
          << ", " << static_cast<long long>(pipe.window) << "u, "
          << (pipe.split == lang::SplitMode::Duplicate ? "::dispar::rt::SplitMode::Duplicate"
              : pipe.split == lang::SplitMode::Demand  ? "::dispar::rt::SplitMode::Demand"
                                                       : "::dispar::rt::SplitMode::RoundRobin")
          << ", " << weightNames[p].first << ", " << weightNames[p].second << ", " << readerNames[p] << ", "
          << static_cast<long long>(pipe.readers.size() > 1 ? pipe.readers.size() : 0) << ", "
          << (pipe.initial > 0 ? "&kDisparInitial" + std::to_string(p) : std::string("nullptr")) << ", "
          << static_cast<long long>(pipe.initial) << ", " << (pipe.splitDeclared ? "true" : "false") << "},\n";
    }
    out << "};\n";
  }
  out << "const ::dispar::rt::ProgramSpec kDisparProgram = {" << quoted(program.name) << ", kDisparVnodes, "
      << static_cast<long long>(program.vnodes.size()) << ", kDisparPipes, "
      << static_cast<long long>(program.pipes.size()) << ", " << static_cast<long long>(program.rankCount())
      << "};\n\n";
}

// Whether the members [first, last) of one VNODE_ARRAY declare the same ports in the same order, each
// port naming the same pipe or the same PIPE_ARRAY (the element differs by member): then one block, with
// a table of each member's elements, dispatches them all.
bool membersShareTheirPorts(const lang::ProgramModel& program, std::size_t first, std::size_t last) {
  const lang::VnodeModel& lead = program.vnodes[first];
  for (std::size_t v = first + 1; v < last; ++v) {
    const lang::VnodeModel& member = program.vnodes[v];
    if (member.functionName != lead.functionName || member.ports.size() != lead.ports.size()) return false;
    for (std::size_t j = 0; j < lead.ports.size(); ++j) {
      const lang::PipeModel& a = program.pipes[static_cast<std::size_t>(lead.ports[j].pipeIndex)];
      const lang::PipeModel& b = program.pipes[static_cast<std::size_t>(member.ports[j].pipeIndex)];
      if (a.qualifiedName != b.qualifiedName || (a.index < 0) != (b.index < 0)) return false;
    }
  }
  return true;
}

// One block for a whole VNODE_ARRAY: the compile time of the generated program must not grow with a
// family's size faster than its tables do (a case per member, each inlining the body, made g++ take
// 34 s for 4,096 members and past 13 minutes for 60,000).
void emitFamilyDispatch(Emitter& out, const lang::ProgramModel& program, std::size_t first, std::size_t last) {
  const lang::VnodeModel& lead = program.vnodes[first];
  const std::size_t ports = lead.ports.size();
  out << "  if (vnode >= " << static_cast<long long>(first) << " && vnode < " << static_cast<long long>(last)
      << ") {  // vnode array '" << lead.family << "', " << static_cast<long long>(last - first) << " members\n";
  if (ports > 0) {
    // Per member and port: the pipe's index in the program, then the element's index in its PIPE_ARRAY.
    out << "    static const int kPorts[][" << static_cast<long long>(2 * ports) << "] = {\n";
    for (std::size_t v = first; v < last; ++v) {
      out << "        {";
      for (std::size_t j = 0; j < ports; ++j) {
        const int pipe = program.vnodes[v].ports[j].pipeIndex;
        out << (j ? ", " : "") << static_cast<long long>(pipe) << ", "
            << static_cast<long long>(program.pipes[static_cast<std::size_t>(pipe)].index);
      }
      out << "},\n";
    }
    out << "    };\n"
        << "    const int* const port = kPorts[vnode - " << static_cast<long long>(first) << "];\n";
  }
  for (std::size_t j = 0; j < ports; ++j) {
    const lang::PipeModel& pipe = program.pipes[static_cast<std::size_t>(lead.ports[j].pipeIndex)];
    const std::string element =
        pipe.index < 0 ? pipe.qualifiedName : pipe.qualifiedName + "[port[" + std::to_string(2 * j + 1) + "]]";
    out << "    " << element << ".dispar_bind(instance.port(port[" << static_cast<long long>(2 * j) << "]));\n";
  }
  out << "    " << lead.functionName << "(vnode - " << static_cast<long long>(first) << ");\n"
      << "    return;\n"
      << "  }\n";
}

// The paper's process skeleton: one case per VNODE (one block per VNODE_ARRAY); each binds the instance's
// ports and calls the VNODE (a member gets its index).
void emitDispatch(Emitter& out, const lang::ProgramModel& program) {
  out << "void disparDispatch(::dispar::rt::Instance& instance) {\n"
      << "  const int vnode = instance.vnode();\n";
  std::vector<bool> inFamilyBlock(program.vnodes.size(), false);
  for (std::size_t first = 0; first < program.vnodes.size();) {
    std::size_t last = first + 1;
    const std::string& family = program.vnodes[first].family;
    while (!family.empty() && last < program.vnodes.size() && program.vnodes[last].family == family) ++last;
    if (last - first > 1 && membersShareTheirPorts(program, first, last)) {
      emitFamilyDispatch(out, program, first, last);
      std::fill(inFamilyBlock.begin() + static_cast<std::ptrdiff_t>(first),
                inFamilyBlock.begin() + static_cast<std::ptrdiff_t>(last), true);
    }
    first = last;
  }
  out << "  switch (vnode) {\n";
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    if (inFamilyBlock[v]) continue;
    const lang::VnodeModel& vnode = program.vnodes[v];
    int first = program.firstRank(static_cast<int>(v));
    out << "    case " << static_cast<long long>(v) << ": {  // vnode '" << vnode.name << "', ranks "
        << static_cast<long long>(first) << ".." << static_cast<long long>(first + vnode.replicas - 1) << "\n";
    for (const lang::PortRef& port : vnode.ports) {
      const lang::PipeModel& pipe = program.pipes[static_cast<std::size_t>(port.pipeIndex)];
      out << "      " << lang::pipeExpression(pipe) << ".dispar_bind(instance.port("
          << static_cast<long long>(port.pipeIndex) << "));\n";
    }
    out << "      " << vnode.functionName << "(" << (vnode.member >= 0 ? std::to_string(vnode.member) : std::string())
        << ");\n"
        << "      break;\n"
        << "    }\n";
  }
  out << "  }\n"
      << "}\n\n";
}

}  // namespace

std::string generateTranslationUnit(const LoweringInput& input) {
  const lang::ProgramModel& program = *input.program;
  Emitter out;
  out << "// Generated by disparcc from " << input.sourcePath << ". Do not edit: edit the .dsp and rebuild.\n";
  if (program.isCuda) {
    // Host clones of the kernels call dispar::hostk; a build without nvcc gets the CUDA names from the
    // host stand-ins; <dispar/gpu.h> decides at run time between the GPU and the host path.
    if (!input.gpuBuild) out << "#include <dispar/cuda_shim.h>\n";
    out << "#include <dispar/hostk.h>\n#include <dispar/gpu.h>\n";
    if (input.dispatchGpuLibraries) out << "#include <dispar/gpu/LibraryDispatch.h>\n";
  }
  out << "#line 1 " << quoted(input.sourcePath) << "\n";
  out << input.editedSource;
  if (!input.editedSource.empty() && input.editedSource.back() != '\n') out << "\n";
  out.resumeGeneratedLines(input.generatedName);
  out << "#include <dispar/runtime.h>\n\n"
      << "namespace {\n\n";
  emitSpecs(out, program);
  emitDispatch(out, program);
  if (input.gpuBuild) {
    out << "const char* const kDisparCudaArchs[] = {";
    for (std::size_t i = 0; i < input.cudaArchs.size(); ++i) out << (i ? ", " : "") << quoted(input.cudaArchs[i]);
    out << "};\n"
        << "const ::dispar::gpu::CudaBackend kDisparDevices(kDisparCudaArchs, "
        << static_cast<long long>(input.cudaArchs.size()) << ");\n\n";
  }
  out << "}  // namespace\n\n"
      << "int main(int argc, char** argv) { return ::dispar::rt::run(argc, argv, kDisparProgram, disparDispatch"
      << (input.gpuBuild ? ", &kDisparDevices" : "") << "); }\n";
  return out.str();
}

}  // namespace dispar::streamcc
