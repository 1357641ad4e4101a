# -DDISPAR_FUZZ=ON: also build the file readers' libFuzzer targets (fuzz/). They need clang
# (-fsanitize=fuzzer; on Debian clang-19 and libclang-rt-19-dev) while the rest of the tree is built
# with the default compiler, so fuzz/ is a project of its own, built here as the ExternalProject
# `dispar_fuzzers` into <build>/fuzz/bin. scripts/fuzz.sh builds and runs them.
option(DISPAR_FUZZ "also build the readers' libFuzzer targets with clang (fuzz/, scripts/fuzz.sh)" OFF)
if(DISPAR_FUZZ)
  find_program(DISPAR_FUZZ_CXX NAMES clang++-19 clang++ DOC "the clang the fuzzers are built with")
  if(NOT DISPAR_FUZZ_CXX)
    message(FATAL_ERROR "DISPAR_FUZZ needs clang++ (Debian: apt-get install clang-19 libclang-rt-19-dev)")
  endif()
  include(ExternalProject)
  ExternalProject_Add(dispar_fuzzers
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/fuzz
    BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_ARGS -DCMAKE_CXX_COMPILER=${DISPAR_FUZZ_CXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
               -DDISPAR_SOURCE_DIR=${PROJECT_SOURCE_DIR}
    BUILD_ALWAYS ON
    INSTALL_COMMAND "")
endif()
