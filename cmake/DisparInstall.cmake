# `cmake --install build --prefix PREFIX`: the tools, the runtime headers and libraries (one set per MPI),
# what the frontend parses CUDA with, the docs, the daemon's systemd unit, and a CMake package
# (`find_package(Dispar)`, `dispar_add_executable`). The tree is relocatable: disparcc finds the rest
# relative to itself (PREFIX/bin/disparcc beside PREFIX/lib/dispar/; streamcc/lib/Driver.cpp).

install(TARGETS disparcc streammap RUNTIME DESTINATION bin)

set(DISPAR_INSTALLED_LIBRARIES dispar_runtime dispar_gpu dispar_hostk dispar_hostlib)
if(TARGET dispar_runtime_smpi)
  list(APPEND DISPAR_INSTALLED_LIBRARIES dispar_runtime_smpi)
endif()
if(TARGET dispar_runtime_openmpi)
  list(APPEND DISPAR_INSTALLED_LIBRARIES dispar_runtime_openmpi dispar_gpu_openmpi)
endif()
install(TARGETS ${DISPAR_INSTALLED_LIBRARIES} ARCHIVE DESTINATION lib/dispar)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/dispar DESTINATION include)
# <dispar/gpu/MapFile.h> reads the map through the record and reader it shares with streammap.
install(FILES ${PROJECT_SOURCE_DIR}/dispar_lang/include/dispar_lang/MapRank.h
              ${PROJECT_SOURCE_DIR}/dispar_lang/include/dispar_lang/JsonRead.h DESTINATION include/dispar_lang)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include_host_only/ DESTINATION share/dispar/include_host_only)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/frontend/cuda_stubs/ DESTINATION share/dispar/cuda_stubs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/dispar FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/dispar)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/streammap-daemon.service DESTINATION lib/systemd/system)

include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/DisparConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/DisparConfig.cmake ${PROJECT_SOURCE_DIR}/cmake/DisparMergeCompileCommands.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/DisparConfigVersion.cmake DESTINATION lib/cmake/Dispar)

# A Debian package of the same tree: `cpack -G DEB` in the build directory writes dispar_VERSION_ARCH.deb,
# which `apt-get install ./dispar_*.deb` installs on Debian 12 with what disparcc and streammap need at
# run time (the shared libraries found by dpkg-shlibdeps, plus the compilers and MPI that disparcc calls).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dispar)
set(CPACK_PACKAGE_VENDOR "DISPAR")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "DISPAR: dataflow programs for heterogeneous GPU clusters (disparcc, streammap)")
set(CPACK_PACKAGE_INSTALL_DIRECTORY dispar)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "DISPAR maintainers <maintainers@dispar.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Called by disparcc (not linked): the MPI compiler wrappers, the C++ compiler behind them, Clang's
# builtin headers for the frontend's parse.
# OpenBLAS and FFTW: disparcc links them (under the cuBLAS/cuFFT host stand-ins) into programs that call cuBLAS or cuFFT.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "mpich, libmpich-dev, g++, libclang-common-19-dev, libfftw3-dev, libopenblas-dev")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin, libopenmpi-dev")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, postgresql")
include(CPack)
