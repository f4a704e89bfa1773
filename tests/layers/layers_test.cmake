# Runs cmake/check_layers.cmake on small source trees and checks what it says.
#   cmake -DCHECKER=<check_layers.cmake> -DWORK=<scratch dir> -P layers_test.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")

set(failures "")

# A tree under WORK/NAME: a layer file (low < mid < high, `high` may include
# `low` only through the exceptions given) and the sources "PATH=CONTENT"
# (write_sources).
function(make_tree name exceptions)
  set(root "${WORK}/${name}")
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}/cmake")
  file(WRITE "${root}/cmake/HydraLayers.cmake"
    "set(HYDRA_LAYERS \"low\" \"mid other\" \"high\")\nset(HYDRA_LAYER_EXCEPTIONS ${exceptions})\n")
  write_sources("${root}" ${ARGN})
endfunction()

# Runs the checker on WORK/NAME; `expect` is PASS or FAIL, and every further
# argument must appear in what it printed.
function(expect name expect)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DROOT=${WORK}/${name}" -P "${CHECKER}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # CMake wraps a long message at spaces: compare words, not lines.
  string(REGEX REPLACE "[ \t\r\n]+" " " said "${out}${err}")
  if(expect STREQUAL "PASS" AND NOT rc EQUAL 0)
    list(APPEND failures "${name}: expected to pass, failed with: ${said}")
  elseif(expect STREQUAL "FAIL" AND rc EQUAL 0)
    list(APPEND failures "${name}: expected to fail, passed")
  endif()
  foreach(needle IN LISTS ARGN)
    string(REGEX REPLACE "[ \t\r\n]+" " " needle "${needle}")
    string(FIND "${said}" "${needle}" found)
    if(found EQUAL -1)
      list(APPEND failures "${name}: \"${needle}\" not in: ${said}")
    endif()
  endforeach()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

# Down and sideways are allowed.
make_tree(down ""
  "core/low/a.h=#pragma once"
  "core/mid/b.cpp=#include \"core/low/a.h\"|#include \"core/other/c.h\""
  "core/other/c.h=#include \"core/mid/b.h\""
  "core/high/d.cpp=#include \"core/mid/b.h\"|#include \"core/low/a.h\"")
expect(down PASS)

# Up is refused, at its file and line, with code before it that has
# semicolons and brackets (which a list of lines would split).
make_tree(up ""
  "core/low/bad.cpp=int x = 1<semicolon> [[maybe_unused]] int y[2] = {1, 2}<semicolon>|// a comment<semicolon> with [brackets]|#include <string>|#include \"core/high/d.h\""
  "core/high/d.h=#pragma once")
expect(up FAIL "core/low/bad.cpp:4: core/low includes core/high, a higher layer")

# Every violation is told, not only the first.
make_tree(many ""
  "core/low/one.cpp=#include \"core/mid/b.h\""
  "core/mid/two.h=#pragma once||#include \"core/high/d.h\""
  "core/high/d.h=#pragma once")
expect(many FAIL "core/low/one.cpp:1: core/low includes core/mid" "core/mid/two.h:3: core/mid includes core/high")

# An exception covers only its own file and folder.
make_tree(excepted "\"core/low/known.cpp high\""
  "core/low/known.cpp=#include \"core/high/d.h\""
  "core/low/other.cpp=#include \"core/high/d.h\""
  "core/low/mid.cpp=#include \"core/mid/b.h\"|"
  "core/high/d.h=#pragma once")
expect(excepted FAIL "core/low/other.cpp:1: core/low includes core/high" "core/low/mid.cpp:1: core/low includes core/mid")
execute_process(COMMAND "${CMAKE_COMMAND}" "-DROOT=${WORK}/excepted" -P "${CHECKER}" ERROR_VARIABLE err)
string(FIND "${err}" "known.cpp" leaked)
if(NOT leaked EQUAL -1)
  list(APPEND failures "excepted: the excepted include was told: ${err}")
endif()

# A folder in no layer, and an include of one, are refused.
make_tree(unknown ""
  "core/stray/s.cpp=#pragma once"
  "core/low/l.cpp=#include \"core/nowhere/n.h\"")
expect(unknown FAIL "core/stray/s.cpp: core/stray is in no layer" "core/low/l.cpp:1: core/low includes core/nowhere, which is in no layer")

# A path through ".." is refused, whichever folder it names first: it would
# reach a higher folder past this check and past the include roots.
make_tree(dotdot ""
  "core/low/a.cpp=#include \"../high/d.h\""
  "core/low/b.cpp=#include <vector>||#include \"core/low/../high/d.h\""
  "core/low/c.cpp=#include \"core/low/a.h\""
  "core/high/d.h=#pragma once")
expect(dotdot FAIL "core/low/a.cpp:1: core/low includes a path through \"..\"" "core/low/b.cpp:3: core/low includes a path through \"..\"")

# A tree without sources is an error, not a pass.
make_tree(empty "")
expect(empty FAIL "no sources found")

# A relative ROOT finds the same violations.
execute_process(COMMAND "${CMAKE_COMMAND}" "-DROOT=up" -P "${CHECKER}" WORKING_DIRECTORY "${WORK}"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  list(APPEND failures "relative ROOT: passed a tree with an upward include")
endif()

report("${failures}" "layer check: every case behaved")
