# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): strips the debug information from the static
# libraries in the package's staging tree. CPACK_STRIP_FILES strips executables, not archives, and the
# RelWithDebInfo runtime libraries are most of the package's size with it.
file(GLOB_RECURSE archives "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.a")
foreach(archive IN LISTS archives)
  execute_process(COMMAND "${CPACK_DISPAR_STRIP}" --strip-debug "${archive}" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "strip --strip-debug ${archive} failed (${status})")
  endif()
endforeach()
