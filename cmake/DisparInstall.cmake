# `cmake --install build --prefix PREFIX`: the tools, the runtime headers and libraries (one set per MPI),
# what the frontend parses CUDA with, the docs, the daemon's systemd unit, and a CMake package
# (`find_package(Dispar)`, `dispar_add_executable`). The tree is relocatable: disparcc finds the rest
# relative to itself (PREFIX/bin/disparcc beside PREFIX/lib/dispar/; streamcc/lib/Driver.cpp).

install(TARGETS disparcc streammap RUNTIME DESTINATION bin)

set(DISPAR_INSTALLED_LIBRARIES dispar_runtime dispar_gpu dispar_hostk)
if(TARGET dispar_runtime_openmpi)
  list(APPEND DISPAR_INSTALLED_LIBRARIES dispar_runtime_openmpi dispar_gpu_openmpi)
endif()
install(TARGETS ${DISPAR_INSTALLED_LIBRARIES} ARCHIVE DESTINATION lib/dispar)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/dispar DESTINATION include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include_host_only/ DESTINATION share/dispar/include_host_only)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/frontend/cuda_stubs/ DESTINATION share/dispar/cuda_stubs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/dispar FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/dispar)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/streammap-daemon.service DESTINATION lib/systemd/system)

include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/DisparConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/DisparConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/DisparConfigVersion.cmake
  DESTINATION lib/cmake/Dispar)
