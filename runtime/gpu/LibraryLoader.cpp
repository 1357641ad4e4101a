// cuBLAS and cuFFT for GPU ranks, loaded at the first call (see <dispar/gpu/LibraryLoader.h>).
#include <dispar/gpu/LibraryLoader.h>

#include <dispar/dispar.h>
#include <dispar/gpu/Errors.h>
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dispar::gpu {
namespace {

const char* baseName(GpuLibrary library) { return library == GpuLibrary::Cublas ? "libcublas.so" : "libcufft.so"; }
const char* displayName(GpuLibrary library) { return library == GpuLibrary::Cublas ? "cuBLAS" : "cuFFT"; }

/// dlopen handles, one per library, opened once.
class LoadedLibraries {
 public:
  void* symbol(GpuLibrary library, const char* major, const char* symbol) {
    std::lock_guard<std::mutex> lock(mutex_);
    void*& handle = handles_[library];
    if (handle == nullptr) handle = open(library, major);
    dlerror();
    void* address = dlsym(handle, symbol);
    if (address == nullptr) {
      const char* why = dlerror();
      throw CudaError(std::string(displayName(library)) + " on host '" + node_name() + "' has no '" + symbol + "'" +
                      (why ? std::string(": ") + why : std::string()) +
                      "; the program was compiled against a newer version of the library");
    }
    return address;
  }

 private:
  // The soname the program was compiled against, first from the loader's search path, then from the
  // toolkit disparcc was built with; the unversioned name last.
  static void* open(GpuLibrary library, const char* major) {
    const std::string versioned = std::string(baseName(library)) + "." + major;
    std::vector<std::string> candidates{versioned};
#ifdef DISPAR_CUDA_LIBRARY_DIR
    candidates.push_back(std::string(DISPAR_CUDA_LIBRARY_DIR) + "/" + versioned);
#endif
    candidates.push_back(baseName(library));
    std::string reasons;
    for (const std::string& candidate : candidates) {
      if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
      const char* why = dlerror();
      reasons += "\n  " + candidate + ": " + (why ? why : "not found");
    }
    throw CudaError(std::string(displayName(library)) + " is not installed on host '" + node_name() +
                    "', where this rank got a GPU; tried:" + reasons +
                    "\n  (install the CUDA libraries there, or set LD_LIBRARY_PATH to them)");
  }

  std::mutex mutex_;
  std::map<GpuLibrary, void*> handles_;
};

}  // namespace

void* loadLibrarySymbol(GpuLibrary library, const char* major, const char* symbol) {
  static LoadedLibraries* libraries = new LoadedLibraries();  // handles stay open until the process ends
  return libraries->symbol(library, major, symbol);
}

}  // namespace dispar::gpu
