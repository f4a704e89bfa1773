# Checks that no source of core/ includes a folder of a higher layer, or
# includes by a path with "..".
#
#   cmake -DROOT=<source tree> [-DLAYERS=<layer file>] [-DSTAMP=<file>] -P check_layers.cmake
#
# LAYERS defaults to ROOT/cmake/HydraLayers.cmake (HYDRA_LAYERS,
# HYDRA_LAYER_EXCEPTIONS). Every violation is told as "FILE:LINE: ..." and the
# script fails; on success it touches STAMP, when given.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "check_layers.cmake: ROOT is not set")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
if(NOT DEFINED LAYERS)
  set(LAYERS "${ROOT}/cmake/HydraLayers.cmake")
endif()
include("${LAYERS}")

# Each folder's floor.
set(index 0)
set(known "")
foreach(layer IN LISTS HYDRA_LAYERS)
  string(REPLACE " " ";" folders "${layer}")
  foreach(folder IN LISTS folders)
    set(floor_${folder} ${index})
    list(APPEND known "${folder}")
  endforeach()
  math(EXPR index "${index} + 1")
endforeach()

file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/core/*.h" "${ROOT}/core/*.cpp")
list(SORT sources)
set(problems "")
if(NOT sources)
  list(APPEND problems "${ROOT}/core: no sources found")
endif()

foreach(source IN LISTS sources)
  string(REGEX MATCH "^core/([^/]+)/" _ "${source}")
  set(own "${CMAKE_MATCH_1}")
  if(own STREQUAL "")
    continue()  # core/CMakeLists.txt and the like: not in a folder
  endif()
  if(NOT own IN_LIST known)
    list(APPEND problems "${source}: core/${own} is in no layer of ${LAYERS}")
    continue()
  endif()
  file(STRINGS "${ROOT}/${source}" includes
       REGEX "^[ \t]*#[ \t]*include[ \t]+\"(core/[^/\"]+/|[^\"]*\\.\\./)")
  foreach(line IN LISTS includes)
    string(REGEX MATCH "\"core/([^/\"]+)/" _ "${line}")
    set(other "${CMAKE_MATCH_1}")
    if(line MATCHES "\"[^\"]*\\.\\./")
      # "../x/y.h" or "core/util/../x/y.h" reaches any folder from any other,
      # past this check and past the libraries' include roots alike.
      set(why "a path through \"..\", which gets around the layers")
    elseif(other STREQUAL own)
      continue()
    elseif(NOT other IN_LIST known)
      set(why "core/${other}, which is in no layer")
    elseif(floor_${other} GREATER floor_${own})
      if("${source} ${other}" IN_LIST HYDRA_LAYER_EXCEPTIONS)
        continue()
      endif()
      set(why "core/${other}, a higher layer")
    else()
      continue()
    endif()
    # The line number, looked up only for a violation (read whole: a list of
    # lines would split at the semicolons of the code).
    file(READ "${ROOT}/${source}" content)
    string(FIND "${content}" "${line}" position)
    string(SUBSTRING "${content}" 0 ${position} before)
    string(REGEX REPLACE "[^\n]" "" newlines "${before}")
    string(LENGTH "${newlines}" at)
    math(EXPR at "${at} + 1")
    list(APPEND problems "${source}:${at}: core/${own} includes ${why}")
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" text)
  message(FATAL_ERROR "An include runs up a layer of core/ (cmake/HydraLayers.cmake):\n${text}")
endif()
if(DEFINED STAMP)
  file(TOUCH "${STAMP}")
endif()
