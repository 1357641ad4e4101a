# Writes a man page from a tool's own --help (generated from its option tables, so the page cannot drift
# from the tool): cmake -DTOOL=... -DNAME=... -DSUMMARY=... -DVERSION=... -DOUTPUT=x.1.gz -P DisparManPage.cmake.
# The page: NAME, the tool's --help verbatim (troff no-fill), then, for a tool whose --help lists
# "commands:" (streammap), each command's --help, then SEE ALSO.
foreach(required TOOL NAME SUMMARY VERSION OUTPUT)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "DisparManPage.cmake: -D${required}=... is required")
  endif()
endforeach()

function(help_of out)
  execute_process(COMMAND ${TOOL} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${TOOL} ${ARGN} --help failed (${status})")
  endif()
  # troff: a backslash is \e; a line starting with . or ' would be a request.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

string(TOUPPER "${NAME}" upper)
set(page ".TH ${upper} 1 \"\" \"DISPAR ${VERSION}\" \"User Commands\"\n.SH NAME\n${NAME} \\- ${SUMMARY}\n")
help_of(main)
string(APPEND page ".SH DESCRIPTION\n.nf\n${main}.fi\n")
# The commands, as the tool's own --help lists them ("  WORD  summary" lines after "commands:").
set(subcommands "")
string(FIND "${main}" "commands:\n" at)
if(at GREATER -1)
  string(SUBSTRING "${main}" ${at} -1 listing)
  string(REGEX MATCHALL "\n  [^ \n]+" words "${listing}")
  foreach(word IN LISTS words)
    string(STRIP "${word}" word)
    list(APPEND subcommands "${word}")
  endforeach()
endif()
foreach(sub IN LISTS subcommands)
  help_of(text ${sub})
  string(APPEND page ".SH ${upper} ${sub}\n.nf\n${text}.fi\n")
endforeach()
string(APPEND page ".SH SEE ALSO\n.BR disparcc (1),\n.BR streammap (1);\nthe documentation in /usr/share/doc/dispar.\n")
get_filename_component(dir "${OUTPUT}" DIRECTORY)
string(REGEX REPLACE "\\.gz$" "" plain "${OUTPUT}")
file(WRITE "${plain}" "${page}")
# gzip -n: no name or time stamp, so the page is the same in every build.
execute_process(COMMAND gzip -9nf "${plain}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip ${plain} failed")
endif()
