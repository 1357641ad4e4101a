// Loading cuBLAS and cuFFT on GPU ranks. Programs do not link them: a binary that did would not start on
// a node without the CUDA libraries, where its CG VNODEs must still run on the host path. A GPU rank
// loads the library at its first call (dlopen, the toolkit's soname), and a missing library or symbol
// is an error naming both.
#ifndef DISPAR_GPU_LIBRARYLOADER_H
#define DISPAR_GPU_LIBRARYLOADER_H

namespace dispar::gpu {

enum class GpuLibrary { Cublas, Cufft };

/// The address of `symbol` in `library` (soname major version `major`, as the program was compiled
/// against); throws CudaError naming the library, the symbol and why. Thread-safe. Defined in dispar_gpu.
void* loadLibrarySymbol(GpuLibrary library, const char* major, const char* symbol);

template <class Function>
Function librarySymbol(GpuLibrary library, const char* major, const char* symbol) {
  return reinterpret_cast<Function>(loadLibrarySymbol(library, major, symbol));
}

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_LIBRARYLOADER_H
