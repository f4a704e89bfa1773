# Preprocesses small sources the way a real library of hydra compiles them
# (its include directories, definitions and options, read from the target by
# tests/layers/CMakeLists.txt) and checks what its include root lets through:
#
#   cmake -DCXX=<compiler> -DLIBRARY=<target> -DSOURCE=<source tree> -DWORK=<scratch dir>
#         -DINCLUDES=a|b -DDEFINES=a|b -DOPTIONS=a|b -DSEES=core/util|... -P include_roots_test.cmake
#
# Every header of every folder in SEES (the folders the library is given) must
# preprocess together, with hydra/version.h; one header of each other folder
# of core/, protocol/ and server/ must stop the compiler with "No such file",
# naming the header; and the repository root must not be on the include path.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")

foreach(var CXX LIBRARY SOURCE WORK INCLUDES SEES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "include_roots_test.cmake: ${var} is not set")
  endif()
endforeach()
foreach(var INCLUDES DEFINES OPTIONS SEES)
  string(REPLACE "|" ";" ${var} "${${var}}")
endforeach()

set(failures "")
get_filename_component(SOURCE "${SOURCE}" REALPATH)
set(flags -std=c++20)
foreach(dir IN LISTS INCLUDES)
  get_filename_component(real "${dir}" REALPATH)
  if(real STREQUAL SOURCE)
    list(APPEND failures "${LIBRARY}: the repository root ${dir} is on its include path")
  endif()
  # The compiler's own directory given again with -I would break its
  # #include_next; the real build leaves it out the same way.
  if(NOT real STREQUAL "/usr/include")
    list(APPEND flags "-I${dir}")
  endif()
endforeach()
foreach(definition IN LISTS DEFINES)
  list(APPEND flags "-D${definition}")
endforeach()
list(APPEND flags ${OPTIONS})

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Preprocesses NAME.cpp holding the includes given; its exit code and what it
# said go to NAME_rc and NAME_said.
function(preprocess name)
  list(TRANSFORM ARGN PREPEND "#include \"")
  list(TRANSFORM ARGN APPEND "\"\n")
  list(JOIN ARGN "" text)
  file(WRITE "${WORK}/${name}.cpp" "${text}")
  execute_process(COMMAND "${CXX}" ${flags} -E -o "${WORK}/${name}.ii" "${WORK}/${name}.cpp"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  set(${name}_said "${out}${err}" PARENT_SCOPE)
endfunction()

# What the library may see, all of it at once.
set(visible "hydra/version.h")
foreach(path IN LISTS SEES)
  file(GLOB headers RELATIVE "${SOURCE}" "${SOURCE}/${path}/*.h")
  if(NOT headers)
    list(APPEND failures "${LIBRARY}: ${SOURCE}/${path} has no headers to include")
  endif()
  list(APPEND visible ${headers})
endforeach()
list(SORT visible)
preprocess(visible ${visible})
if(NOT visible_rc EQUAL 0)
  list(APPEND failures "${LIBRARY}: its own and lower folders' headers do not preprocess with its include path:\n${visible_said}")
endif()

# What it may not.
file(GLOB folders RELATIVE "${SOURCE}" LIST_DIRECTORIES true "${SOURCE}/core/*")
set(hidden "")
foreach(path IN LISTS folders ITEMS protocol server)
  if(IS_DIRECTORY "${SOURCE}/${path}" AND NOT path IN_LIST SEES)
    list(APPEND hidden "${path}")
  endif()
endforeach()
list(SORT hidden)
foreach(path IN LISTS hidden)
  file(GLOB headers RELATIVE "${SOURCE}" "${SOURCE}/${path}/*.h")
  if(NOT headers)
    continue()
  endif()
  list(SORT headers)
  list(GET headers 0 header)
  string(MAKE_C_IDENTIFIER "hidden_${path}" name)
  preprocess(${name} "${header}")
  if(${name}_rc EQUAL 0)
    list(APPEND failures "${LIBRARY}: ${header} is reachable, though ${path} is not among the folders it may see")
  elseif(NOT ${name}_said MATCHES "${header}(: No such file|' file not found)")
    list(APPEND failures "${LIBRARY}: including ${header} failed, but not for want of the file:\n${${name}_said}")
  endif()
endforeach()
list(LENGTH hidden hidden_count)
if(hidden_count EQUAL 0)
  list(APPEND failures "${LIBRARY}: every folder is visible to it")
endif()

list(LENGTH visible visible_count)
report("${failures}" "${LIBRARY}: ${visible_count} headers reachable, ${hidden_count} folders out of reach")
