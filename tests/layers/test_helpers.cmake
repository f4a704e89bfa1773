# What the cmake -P tests of tests/layers share.

# Writes files under ROOT from "PATH=CONTENT" arguments ("|" for a new line,
# "<semicolon>" for ";", which would split the list).
function(write_sources root)
  foreach(source IN LISTS ARGN)
    string(FIND "${source}" "=" at)
    string(SUBSTRING "${source}" 0 ${at} path)
    math(EXPR from "${at} + 1")
    string(SUBSTRING "${source}" ${from} -1 content)
    string(REPLACE "|" "\n" content "${content}")
    string(REPLACE "<semicolon>" ";" content "${content}")
    file(WRITE "${root}/${path}" "${content}")
  endforeach()
endfunction()

# Fails with every line of the list `failures`, or says `passed`.
function(report failures passed)
  if(failures)
    list(JOIN failures "\n" text)
    message(FATAL_ERROR "${text}")
  endif()
  message(STATUS "${passed}")
endfunction()
