# dispar_warnings(target): the project's warning set, applied to our own targets only.
function(dispar_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
