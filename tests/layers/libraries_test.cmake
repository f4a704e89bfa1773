# Builds tests/layers/project with the real helpers (cmake/HydraIncludeRoots.cmake)
# and the real compiler, and checks that an include of a higher floor's
# folder fails to compile while includes down and sideways build and link.
#   cmake -DPROJECT=<tests/layers/project> -DHELPERS=<cmake dir> -DWORK=<scratch dir>
#         -DGENERATOR=<generator> -DCXX=<compiler> -P libraries_test.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")

set(failures "")

# A copy of the project in WORK/NAME/src with the sources "PATH=CONTENT"
# (write_sources; of two for one path, the later wins), configured with CASE
# and built; NAME_configured, NAME_built and NAME_said tell how it went.
function(build name case)
  set(src "${WORK}/${name}/src")
  file(REMOVE_RECURSE "${WORK}/${name}")
  file(COPY "${PROJECT}/CMakeLists.txt" DESTINATION "${src}")
  set(sources
    "core/low/low.h=#pragma once|int low()<semicolon>"
    "core/low/low.cpp=#include \"core/low/low.h\"|int low() { return 1<semicolon> }"
    "core/mid/mid.h=#pragma once|int mid()<semicolon>"
    "core/mid/mid.cpp=#include \"core/mid/mid.h\"|#include \"core/low/low.h\"|int mid() { return low() + 1<semicolon> }"
    "core/high/high.h=#pragma once|int high()<semicolon>"
    "core/high/high.cpp=#include \"core/high/high.h\"|#include \"core/mid/mid.h\"|int high() { return mid() + 1<semicolon> }"
    "core/high/stray.cpp=int stray() { return 0<semicolon> }"
    "main.cpp=#include \"core/high/high.h\"|int main() { return high() == 3 ? 0 : 1<semicolon> }"
    ${ARGN})
  write_sources("${src}" ${sources})
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${src}" -B "${WORK}/${name}/build" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX}" "-DHYDRA_CMAKE_DIR=${HELPERS}" "-DCASE=${case}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(said "${out}${err}")
  set(built FALSE)
  if(rc EQUAL 0)
    set(${name}_configured TRUE PARENT_SCOPE)
    execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/${name}/build"
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(APPEND said "${out}${err}")
    if(rc EQUAL 0)
      execute_process(COMMAND "${WORK}/${name}/build/probe" RESULT_VARIABLE rc)
      set(built TRUE)
      if(NOT rc EQUAL 0)
        string(APPEND said "probe exited with ${rc}")
        set(built FALSE)
      endif()
    endif()
  else()
    set(${name}_configured FALSE PARENT_SCOPE)
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " said "${said}")
  set(${name}_built ${built} PARENT_SCOPE)
  set(${name}_said "${said}" PARENT_SCOPE)
endfunction()

# Down and sideways (mid and high share a library): builds, links and runs.
build(down "")
if(NOT down_built)
  list(APPEND failures "down: expected to build, failed with: ${down_said}")
endif()

# Up from the low library: the compiler does not find the header.
build(up ""
  "core/low/low.cpp=#include \"core/low/low.h\"|#include \"core/high/high.h\"|int low() { return 1<semicolon> }")
if(NOT up_configured)
  list(APPEND failures "up: expected to configure, failed with: ${up_said}")
elseif(up_built)
  list(APPEND failures "up: core/low/low.cpp includes core/high/high.h and still built")
elseif(NOT up_said MATCHES "core/high/high.h(: No such file|' file not found)")
  list(APPEND failures "up: failed, but not for want of core/high/high.h: ${up_said}")
endif()

# The same through a header of the low library, included from the high one:
# the low library's own source still cannot compile it.
build(up_in_header ""
  "core/low/low.h=#pragma once|#include \"core/mid/mid.h\"|int low()<semicolon>")
if(up_in_header_built)
  list(APPEND failures "up_in_header: core/low/low.h includes core/mid/mid.h and still built")
elseif(NOT up_in_header_said MATCHES "core/mid/mid.h(: No such file|' file not found)")
  list(APPEND failures "up_in_header: failed, but not for want of core/mid/mid.h: ${up_in_header_said}")
endif()

# Libraries that would split the floors, and a source given to a library that
# does not hold its folder, are refused when configuring.
build(split_floor split_floor)
if(split_floor_configured OR NOT split_floor_said MATCHES "core/high of probe_low is not on a floor below")
  list(APPEND failures "split_floor: expected the configure to refuse it: ${split_floor_said}")
endif()
build(wrong_library wrong_library)
if(wrong_library_configured OR NOT wrong_library_said MATCHES "stray.cpp is added to probe_low")
  list(APPEND failures "wrong_library: expected the configure to refuse it: ${wrong_library_said}")
endif()

report("${failures}" "core libraries: an upward include does not compile; every case behaved")
