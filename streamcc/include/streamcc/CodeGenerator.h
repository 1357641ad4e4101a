// StreamCC's code generation: the process skeleton (one case per VNODE, ranks assigned in source
// order) and the binding of ports to pipes, around the user's source.
#ifndef DISPAR_STREAMCC_CODE_GENERATOR_H
#define DISPAR_STREAMCC_CODE_GENERATOR_H

#include "dispar_lang/Program.h"

#include <string>
#include <vector>

namespace dispar::streamcc {

struct LoweringInput {
  const lang::ProgramModel* program = nullptr;
  std::string sourcePath;              // as given to disparcc; used in #line so errors point at the .dsp
  std::string editedSource;            // the user's source after the frontend's edits (host clones, launches)
  std::string generatedName;           // the generated file's name, for #line in generated parts
  bool gpuBuild = false;               // compiled by nvcc: CG ranks select a GPU at start-up
  bool dispatchGpuLibraries = false;   // cuBLAS / cuFFT calls go through ::dispar::gpu (GPU or host path)
  std::vector<std::string> cudaArchs;  // compiled GPU architectures, checked against each rank's GPU
};

/// The whole generated translation unit.
std::string generateTranslationUnit(const LoweringInput& input);

}  // namespace dispar::streamcc

#endif
