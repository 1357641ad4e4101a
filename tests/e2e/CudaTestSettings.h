// What the CUDA end-to-end tests run: the built disparcc, the MPI launcher, the source tree, and
// whether the build found a CUDA toolkit (then disparcc builds with nvcc). Set by tests/e2e/CMakeLists.txt.
#ifndef DISPAR_TESTS_E2E_CUDATESTSETTINGS_H
#define DISPAR_TESTS_E2E_CUDATESTSETTINGS_H

#include <string>

namespace dispar::testing {

inline const std::string kDisparcc = DISPARCC_PATH;
inline const std::string kMpiexec = MPIEXEC_PATH;
inline const std::string kSourceDir = DISPAR_SOURCE_DIR;
inline constexpr bool kHaveCuda = DISPAR_TEST_HAVE_CUDA;

}  // namespace dispar::testing

#endif
