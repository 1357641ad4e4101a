# Finds every dependency and stops with one clear line naming what is missing and how to get it,
# instead of a wall of compiler errors later. scripts/setup.sh installs all of them on Debian 12.

set(DISPAR_SETUP_HINT "run scripts/setup.sh (Debian 12) to install it")

macro(dispar_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "DISPAR: missing dependency: ${what} (Debian package ${package}); ${DISPAR_SETUP_HINT}")
  endif()
endmacro()

# Clang/LLVM 19 LibTooling.
# LLVM's version file only accepts an exact major.minor, so check the major version by hand.
find_package(LLVM CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(LLVM_FOUND AND NOT LLVM_VERSION_MAJOR EQUAL 19)
  set(LLVM_FOUND FALSE)
endif()
dispar_require(LLVM_FOUND "LLVM 19" "llvm-19-dev")
find_package(Clang CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/clang NO_DEFAULT_PATH)
dispar_require(Clang_FOUND "Clang 19 LibTooling" "libclang-19-dev libclang-cpp19-dev")
set(DISPAR_CLANG_RESOURCE_DIR "${LLVM_LIBRARY_DIR}/clang/${LLVM_VERSION_MAJOR}")
if(NOT EXISTS "${DISPAR_CLANG_RESOURCE_DIR}/include/stddef.h")
  message(FATAL_ERROR "DISPAR: missing dependency: Clang 19 builtin headers in ${DISPAR_CLANG_RESOURCE_DIR} (Debian package libclang-common-19-dev); ${DISPAR_SETUP_HINT}")
endif()

# MPICH.
find_program(DISPAR_MPICXX NAMES mpicxx.mpich mpicxx)
find_program(DISPAR_MPIEXEC NAMES mpiexec.mpich mpiexec)
set(MPI_CXX_COMPILER ${DISPAR_MPICXX})
find_package(MPI QUIET COMPONENTS C CXX)
dispar_require(MPI_CXX_FOUND "MPI (MPICH)" "mpich libmpich-dev")
dispar_require(DISPAR_MPIEXEC "mpiexec (MPICH)" "mpich")

# Open MPI, optional: where installed (beside MPICH, under its own names) the runtime is also built
# against it, and `disparcc --mpi=openmpi` builds programs for `mpirun`. Only the compiler wrapper's
# own answers are used (--showme), nothing of Open MPI's internals.
find_program(DISPAR_OPENMPI_MPICXX NAMES mpicxx.openmpi)
find_program(DISPAR_OPENMPI_MPIRUN NAMES mpirun.openmpi)
if(DISPAR_OPENMPI_MPICXX AND DISPAR_OPENMPI_MPIRUN)
  execute_process(COMMAND ${DISPAR_OPENMPI_MPICXX} --showme:incdirs OUTPUT_VARIABLE openmpi_incdirs
                  RESULT_VARIABLE openmpi_status OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${DISPAR_OPENMPI_MPICXX} --showme:libdirs OUTPUT_VARIABLE openmpi_libdirs
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${DISPAR_OPENMPI_MPICXX} --showme:libs OUTPUT_VARIABLE openmpi_libs
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(openmpi_status EQUAL 0)
    separate_arguments(openmpi_incdirs)
    separate_arguments(openmpi_libdirs)
    separate_arguments(openmpi_libs)
    add_library(DISPAR::OpenMPI INTERFACE IMPORTED)
    set_target_properties(DISPAR::OpenMPI PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${openmpi_incdirs}")
    target_link_directories(DISPAR::OpenMPI INTERFACE ${openmpi_libdirs})
    target_link_libraries(DISPAR::OpenMPI INTERFACE ${openmpi_libs})
    message(STATUS "DISPAR: Open MPI found (${DISPAR_OPENMPI_MPICXX}): disparcc --mpi=openmpi available")
  endif()
endif()
if(NOT TARGET DISPAR::OpenMPI)
  message(STATUS "DISPAR: no Open MPI (Debian packages openmpi-bin libopenmpi-dev); disparcc builds for MPICH only")
endif()
# SimGrid's SMPI, optional: where installed (Debian package libsimgrid-dev) the runtime is also built
# against it, and `disparcc --target smpi` builds programs that `streammap simulate` runs on a simulated
# cluster (docs/simulation.md). smpicxx links programs as shared objects: everything they link is PIC.
find_program(DISPAR_SMPICXX NAMES smpicxx)
find_program(DISPAR_SMPIRUN NAMES smpirun)
find_path(DISPAR_SMPI_INCLUDE_DIR NAMES smpi/smpi.h)
find_library(DISPAR_SIMGRID_LIBRARY NAMES simgrid)
if(DISPAR_SMPICXX AND DISPAR_SMPIRUN AND DISPAR_SMPI_INCLUDE_DIR AND DISPAR_SIMGRID_LIBRARY)
  add_library(DISPAR::SMPI INTERFACE IMPORTED)
  # smpi/ first: its mpi.h is the one the runtime's `#include <mpi.h>` must find.
  set_target_properties(DISPAR::SMPI PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${DISPAR_SMPI_INCLUDE_DIR}/smpi;${DISPAR_SMPI_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS DISPAR_TARGET_SMPI
    INTERFACE_LINK_LIBRARIES "${DISPAR_SIMGRID_LIBRARY}")
  message(STATUS "DISPAR: SimGrid SMPI found (${DISPAR_SMPICXX}): disparcc --target smpi available")
else()
  message(STATUS "DISPAR: no SimGrid SMPI (Debian package libsimgrid-dev); disparcc --target smpi unavailable")
endif()

set(DISPAR_DEFAULT_MPI "mpich" CACHE STRING "MPI that disparcc builds programs for without --mpi: mpich or openmpi")
set_property(CACHE DISPAR_DEFAULT_MPI PROPERTY STRINGS mpich openmpi)
if(NOT DISPAR_DEFAULT_MPI MATCHES "^(mpich|openmpi)$")
  message(FATAL_ERROR "DISPAR: DISPAR_DEFAULT_MPI must be 'mpich' or 'openmpi', not '${DISPAR_DEFAULT_MPI}'")
endif()
if(DISPAR_DEFAULT_MPI STREQUAL "openmpi" AND NOT TARGET DISPAR::OpenMPI)
  message(FATAL_ERROR "DISPAR: DISPAR_DEFAULT_MPI=openmpi but Open MPI is missing (Debian packages openmpi-bin libopenmpi-dev); ${DISPAR_SETUP_HINT}")
endif()

find_package(SQLite3 QUIET)
dispar_require(SQLite3_FOUND "SQLite 3" "libsqlite3-dev")

find_package(PkgConfig QUIET)
dispar_require(PKG_CONFIG_FOUND "pkg-config" "pkg-config")
pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
dispar_require(HWLOC_FOUND "hwloc" "libhwloc-dev")
pkg_check_modules(FFTW3 QUIET IMPORTED_TARGET fftw3)
dispar_require(FFTW3_FOUND "FFTW 3" "libfftw3-dev")
# Single precision, for cuFFT's C2C/R2C/C2R on the host path (same Debian package).
pkg_check_modules(FFTW3F QUIET IMPORTED_TARGET fftw3f)
dispar_require(FFTW3F_FOUND "FFTW 3 (single precision)" "libfftw3-dev")
pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
dispar_require(OPENBLAS_FOUND "OpenBLAS" "libopenblas-dev")
pkg_check_modules(LIBPQ QUIET IMPORTED_TARGET libpq)
dispar_require(LIBPQ_FOUND "libpq (PostgreSQL client library)" "libpq-dev")
# The PostgreSQL server, for the tests of the resource database's PostgreSQL backend (they start their
# own server). Not required to build: without it those tests fail, naming the package.
file(GLOB DISPAR_POSTGRESQL_BINDIRS LIST_DIRECTORIES true /usr/lib/postgresql/*/bin)
find_program(DISPAR_PG_CTL NAMES pg_ctl PATHS ${DISPAR_POSTGRESQL_BINDIRS} NO_DEFAULT_PATH)
if(DISPAR_PG_CTL)
  get_filename_component(DISPAR_POSTGRESQL_BINDIR "${DISPAR_PG_CTL}" DIRECTORY)
else()
  set(DISPAR_POSTGRESQL_BINDIR "")
  message(STATUS "DISPAR: no PostgreSQL server (Debian package postgresql); the postgresql tests will fail")
endif()

find_package(nlohmann_json 3 QUIET)
dispar_require(nlohmann_json_FOUND "nlohmann/json" "nlohmann-json3-dev")

# GoogleTest, for the test suite only: the main job (scripts/setup.sh) builds without it; scripts/test.sh
# installs it and reconfigures.
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  message(STATUS "DISPAR: no GoogleTest (Debian packages libgtest-dev googletest): the tests are not configured; "
                 "scripts/test.sh installs it")
endif()

find_package(Threads REQUIRED)

# CUDA toolkit: optional. Without it disparcc builds CUDA programs for the host only.
set(DISPAR_CUDA_PATH "/usr/local/cuda" CACHE PATH "CUDA toolkit used by default")
if(EXISTS "${DISPAR_CUDA_PATH}/bin/nvcc")
  set(DISPAR_HAVE_CUDA ON)
  message(STATUS "DISPAR: CUDA toolkit found at ${DISPAR_CUDA_PATH}")
else()
  set(DISPAR_HAVE_CUDA OFF)
  message(STATUS "DISPAR: no CUDA toolkit at ${DISPAR_CUDA_PATH}; CUDA programs will be built host-only")
endif()
