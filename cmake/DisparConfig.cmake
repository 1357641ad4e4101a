# The DISPAR package for CMake projects (installed as PREFIX/lib/cmake/Dispar/DisparConfig.cmake):
#
#   find_package(Dispar REQUIRED)                      # -DCMAKE_PREFIX_PATH=PREFIX when not in /usr
#   dispar_add_executable(app app.dsp
#                         [MPI mpich|openmpi]          # disparcc --mpi
#                         [CUDA_ARCHS sm_80 ...]       # disparcc --cuda-arch
#                         [INCLUDE_DIRECTORIES dir ...] [DEFINITIONS NAME[=VALUE] ...]
#                         [LIBRARIES fftw3 ...]        # disparcc -l
#                         [OUTPUT_DIRECTORY dir])      # default: CMAKE_RUNTIME_OUTPUT_DIRECTORY, else bin/
#
# builds the program `app` and its `app.rtg.json` with disparcc into the output directory (the binary
# directory's bin/ by default: a custom target cannot share its name with a file beside it), again
# whenever the .dsp or a file it includes changes (disparcc -MF writes the dependencies; CMake 3.20 or
# later reads them). The target `app` has the properties DISPAR_PROGRAM and DISPAR_RTG (the two paths).
# Every program's .dsp also gets an entry in the build directory's compile_commands.json (disparcc -MJ,
# merged after each build with CMake's own entries), so that clangd opens it with DISPAR's declarations.
# DISPAR_DISPARCC and DISPAR_STREAMMAP name the tools.

get_filename_component(DISPAR_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_program(DISPAR_DISPARCC disparcc PATHS "${DISPAR_PREFIX}/bin" NO_DEFAULT_PATH)
find_program(DISPAR_STREAMMAP streammap PATHS "${DISPAR_PREFIX}/bin" NO_DEFAULT_PATH)
if(NOT DISPAR_DISPARCC OR NOT DISPAR_STREAMMAP)
  set(Dispar_FOUND FALSE)
  set(Dispar_NOT_FOUND_MESSAGE "disparcc or streammap missing under ${DISPAR_PREFIX}/bin")
  return()
endif()
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(WARNING "Dispar: CMake ${CMAKE_VERSION} cannot read depfiles of custom commands; programs are "
                  "rebuilt only when their .dsp changes, not when a file it includes does")
endif()

function(dispar_add_executable name source)
  cmake_parse_arguments(ARG "" "MPI;OUTPUT_DIRECTORY" "CUDA_ARCHS;INCLUDE_DIRECTORIES;DEFINITIONS;LIBRARIES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dispar_add_executable(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(input "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(ARG_OUTPUT_DIRECTORY)
    get_filename_component(directory "${ARG_OUTPUT_DIRECTORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  elseif(CMAKE_RUNTIME_OUTPUT_DIRECTORY)
    set(directory "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  else()
    set(directory "${CMAKE_CURRENT_BINARY_DIR}/bin")
  endif()
  file(MAKE_DIRECTORY "${directory}")
  set(program "${directory}/${name}")
  set(args "${input}" -o "${program}" -MF "${program}.d" -MJ "${program}.compile_commands.json")
  if(ARG_MPI)
    list(APPEND args --mpi "${ARG_MPI}")
  endif()
  foreach(arch IN LISTS ARG_CUDA_ARCHS)
    list(APPEND args --cuda-arch "${arch}")
  endforeach()
  foreach(dir IN LISTS ARG_INCLUDE_DIRECTORIES)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args "-I${dir}")
  endforeach()
  foreach(definition IN LISTS ARG_DEFINITIONS)
    list(APPEND args "-D${definition}")
  endforeach()
  foreach(library IN LISTS ARG_LIBRARIES)
    list(APPEND args "-l${library}")
  endforeach()
  set(depfile)
  if(NOT CMAKE_VERSION VERSION_LESS 3.20)
    set(depfile DEPFILE "${program}.d")
  endif()
  add_custom_command(OUTPUT "${program}" "${program}.rtg.json"
    COMMAND "${DISPAR_DISPARCC}" ${args}
    DEPENDS "${input}" "${DISPAR_DISPARCC}"
    ${depfile}
    COMMENT "disparcc ${source} -o ${name}"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS "${program}")
  set_target_properties(${name} PROPERTIES DISPAR_PROGRAM "${program}" DISPAR_RTG "${program}.rtg.json")

  # One merge target for the whole project, run after every program is built.
  set_property(GLOBAL APPEND PROPERTY DISPAR_COMPILE_COMMANDS "${program}.compile_commands.json")
  if(NOT TARGET dispar_compile_commands)
    add_custom_target(dispar_compile_commands ALL
      COMMAND "${CMAKE_COMMAND}" -D "DATABASE=${CMAKE_BINARY_DIR}/compile_commands.json"
              -D "FRAGMENTS_FILE=${CMAKE_BINARY_DIR}/dispar_compile_commands.txt"
              -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/DisparMergeCompileCommands.cmake"
      COMMENT "compile_commands.json: the .dsp programs"
      VERBATIM)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _dispar_write_fragment_list)
  endif()
  add_dependencies(dispar_compile_commands ${name})
endfunction()

function(_dispar_write_fragment_list)
  get_property(fragments GLOBAL PROPERTY DISPAR_COMPILE_COMMANDS)
  list(JOIN fragments "\n" text)
  file(WRITE "${CMAKE_BINARY_DIR}/dispar_compile_commands.txt" "${text}\n")
endfunction()
