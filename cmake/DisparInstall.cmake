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
# The daemon's unit names the installed streammap: written when installed, from the prefix then in force
# (cpack installs under /usr, `cmake --install --prefix P` under P).
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/packaging/streammap-daemon.service.in\" unit)
  string(REPLACE \"@DISPAR_INSTALLED_BINDIR@\" \"\${CMAKE_INSTALL_PREFIX}/bin\" unit \"\${unit}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/streammap-daemon.service\" \"\${unit}\")
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/streammap-daemon.service\")")

# Man pages, generated from each tool's --help (its option tables), so they cannot drift from it.
set(DISPAR_MAN_PAGES "")
foreach(tool disparcc streammap)
  if(tool STREQUAL "disparcc")
    set(summary "compile a DISPAR dataflow program into an MPI program and its RTG")
  else()
    set(summary "discover the resources of a cluster, map DISPAR programs onto them and launch them")
  endif()
  set(page ${CMAKE_BINARY_DIR}/man/${tool}.1.gz)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:${tool}> -DNAME=${tool} "-DSUMMARY=${summary}"
            -DVERSION=${PROJECT_VERSION} -DOUTPUT=${page} -P ${PROJECT_SOURCE_DIR}/cmake/DisparManPage.cmake
    DEPENDS ${tool} ${PROJECT_SOURCE_DIR}/cmake/DisparManPage.cmake
    COMMENT "Writing the man page of ${tool}")
  list(APPEND DISPAR_MAN_PAGES ${page})
endforeach()
add_custom_target(dispar_man_pages ALL DEPENDS ${DISPAR_MAN_PAGES})
install(FILES ${DISPAR_MAN_PAGES} DESTINATION share/man/man1)

# Debian's copyright file and changelog (a native package's: changelog.gz; gzip -n: the same bytes in every
# build).
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/changelog > ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog)
add_custom_target(dispar_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${CMAKE_BINARY_DIR}/packaging/changelog.gz
        DESTINATION share/doc/dispar)

# The package carries no debug information: CPack strips the executables (CPACK_STRIP_FILES) and
# packaging/StripArchives.cmake the static libraries in its staging tree; a build tree keeps
# RelWithDebInfo, and so does `cmake --install`.
set(CPACK_DISPAR_STRIP "${CMAKE_STRIP}")
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/StripArchives.cmake)

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
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "compiler and mapper for dataflow programs on GPU clusters")
# Debian's extended description, under the summary (CPack puts the summary first): lines of at most 80
# characters (lintian).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "DISPAR compiles dataflow programs for heterogeneous GPU clusters. The
application is a graph of VNODEs (units of computation, which may launch CUDA
kernels or call GPU libraries) joined by typed PIPEs, in one .dsp file.
disparcc lowers it to an MPI (and CUDA) program and writes its Requirement
Topology Graph; streammap discovers the CPUs and GPUs of each node into a
resource database, places the instances of the graph on the nodes, groups them
into MPI ranks and launches the program with mpiexec or srun. GPU VNODEs run
their kernels on the host where a node has no GPU.")
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
set(CPACK_DEBIAN_PACKAGE_DEPENDS "mpich, libmpich-dev, g++, libclang-common-19-dev")
# Optional (docs/libraries.md): FFTW and OpenBLAS for programs that call cuBLAS or cuFFT on the host path
# (and for programs that link them themselves); Open MPI for `disparcc --mpi=openmpi`; SimGrid for the
# SMPI runtime (`disparcc --target smpi`, `streammap simulate`); Slurm and PostgreSQL for clusters.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libfftw3-dev, libopenblas-dev, openmpi-bin, libopenmpi-dev")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libsimgrid-dev, slurm-client, postgresql")
include(CPack)
