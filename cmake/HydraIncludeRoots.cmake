# Include roots: what a library of hydra may include, made a fact of its
# build rather than a rule read from its sources.
#
# A library built with hydra_include_root() does not have the repository root
# on its include path. It has a folder of its own in the build tree,
# include_roots/<target>, that holds one symbolic link per source folder it
# may see, at the same relative path (include_roots/hydra_core_base/core/util
# -> <source>/core/util). `#include "core/util/text.h"` compiles there;
# `#include "core/workspace/workspace.h"` from a library that is not given
# core/workspace stops the compiler with "No such file or directory".
# (An include relative to the including file, "../x/y.h", would get around it:
# sources include by the path from the repository root, and
# cmake/check_layers.cmake reads only those.)

# hydra_include_root(TARGET PATH...)
# Gives TARGET the include root that exposes exactly PATH... (folders of the
# source tree, such as core/util or protocol), privately: the root is for
# TARGET's own sources. Those who link TARGET reach its headers through their
# own root or, outside core/ and protocol/, through hydra_options.
function(hydra_include_root target)
  set(root "${PROJECT_BINARY_DIR}/include_roots/${target}")
  # Made afresh at each configure, so a folder taken from the list is gone.
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}")
  foreach(path IN LISTS ARGN)
    if(NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${path}")
      message(FATAL_ERROR "hydra_include_root(${target}): ${PROJECT_SOURCE_DIR}/${path} is not a folder")
    endif()
    get_filename_component(parent "${root}/${path}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${path}" "${root}/${path}" SYMBOLIC)
  endforeach()
  target_include_directories(${target} PRIVATE "${root}")
  set_property(TARGET ${target} PROPERTY HYDRA_INCLUDE_ROOT "${root}")
  set_property(TARGET ${target} PROPERTY HYDRA_SEES ${ARGN})
endfunction()

# The floor of each folder of core/ from HYDRA_LAYERS (cmake/HydraLayers.cmake),
# as hydra_floor_<folder> in the caller's scope.
macro(_hydra_core_floors)
  set(_hydra_index 0)
  foreach(_hydra_layer IN LISTS HYDRA_LAYERS)
    string(REPLACE " " ";" _hydra_folders "${_hydra_layer}")
    foreach(_hydra_folder IN LISTS _hydra_folders)
      set(hydra_floor_${_hydra_folder} ${_hydra_index})
    endforeach()
    math(EXPR _hydra_index "${_hydra_index} + 1")
  endforeach()
endmacro()

# hydra_core_library(NAME FOLDERS folder... [ON library] [SEES path...])
# A static library of core/ that holds the sources of core/<folder>... (each
# folder's CMakeLists.txt adds its own with target_sources(NAME ...)). It
# stands ON one lower library of core/, linked PUBLIC, and its include root
# exposes its own folders, every folder that library sees, and the extra
# SEES paths (protocol, say) with those the lower library was given:
# nothing of a higher floor.
#
# The folders must sit on floors of HYDRA_LAYERS above all of the lower
# library's, so the libraries cut the floors into consecutive slices and a
# floor is never split between two libraries. Inside one library the folders
# may include each other; the floors between them are held by
# cmake/check_layers.cmake alone.
function(hydra_core_library name)
  cmake_parse_arguments(ARG "" "ON" "FOLDERS;SEES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_FOLDERS)
    message(FATAL_ERROR "hydra_core_library(${name}): expected FOLDERS folder... [ON library] [SEES path...]")
  endif()
  _hydra_core_floors()
  set(lowest "")
  foreach(folder IN LISTS ARG_FOLDERS)
    if(NOT DEFINED hydra_floor_${folder})
      message(FATAL_ERROR "hydra_core_library(${name}): core/${folder} is on no floor of HYDRA_LAYERS")
    endif()
    if(lowest STREQUAL "" OR hydra_floor_${folder} LESS lowest)
      set(lowest ${hydra_floor_${folder}})
    endif()
  endforeach()

  set(core_folders ${ARG_FOLDERS})
  if(ARG_ON)
    get_target_property(below ${ARG_ON} HYDRA_CORE_SEES)
    foreach(folder IN LISTS below)
      if(NOT hydra_floor_${folder} LESS lowest)
        message(FATAL_ERROR "hydra_core_library(${name}): core/${folder} of ${ARG_ON} is not on a floor below "
                            "every folder of ${name} (cmake/HydraLayers.cmake): a library may not split a floor "
                            "or stand on a higher one")
      endif()
    endforeach()
    list(APPEND core_folders ${below})
    # What the lower library sees outside core/ (protocol) stays in sight.
    get_target_property(below_extra ${ARG_ON} HYDRA_EXTRA_SEES)
    if(below_extra)
      list(APPEND ARG_SEES ${below_extra})
      list(REMOVE_DUPLICATES ARG_SEES)
    endif()
  endif()

  add_library(${name} STATIC)
  target_link_libraries(${name} PUBLIC hydra_flags ${ARG_ON})
  set_property(TARGET ${name} PROPERTY HYDRA_CORE_FOLDERS ${ARG_FOLDERS})
  set_property(TARGET ${name} PROPERTY HYDRA_CORE_SEES ${core_folders})
  set_property(TARGET ${name} PROPERTY HYDRA_EXTRA_SEES ${ARG_SEES})
  list(TRANSFORM core_folders PREPEND "core/" OUTPUT_VARIABLE paths)
  hydra_include_root(${name} ${paths} ${ARG_SEES})
endfunction()

# hydra_core_libraries_check(LIBRARY...)
# Once every folder has added its sources: each folder of HYDRA_LAYERS is in
# exactly one of LIBRARY..., and each library compiles only its own folders'
# sources (a folder's CMakeLists.txt naming the wrong library would build
# that folder with another floor's include root).
function(hydra_core_libraries_check)
  _hydra_core_floors()
  set(owned "")
  foreach(library IN LISTS ARGN)
    get_target_property(folders ${library} HYDRA_CORE_FOLDERS)
    foreach(folder IN LISTS folders)
      if(folder IN_LIST owned)
        message(FATAL_ERROR "core/${folder} is in two libraries of core/")
      endif()
      list(APPEND owned ${folder})
    endforeach()
    get_target_property(sources ${library} SOURCES)
    if(NOT sources)
      message(FATAL_ERROR "${library} has no sources")
    endif()
    get_target_property(directory ${library} SOURCE_DIR)
    foreach(source IN LISTS sources)
      # Relative when added in the library's own directory.
      get_filename_component(source "${source}" ABSOLUTE BASE_DIR "${directory}")
      file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}/core" "${source}")
      string(REGEX MATCH "^[^/]+" folder "${relative}")
      if(NOT folder IN_LIST folders)
        message(FATAL_ERROR "${source} is added to ${library}, which holds core/ folders ${folders} only")
      endif()
    endforeach()
  endforeach()
  foreach(layer IN LISTS HYDRA_LAYERS)
    string(REPLACE " " ";" folders "${layer}")
    foreach(folder IN LISTS folders)
      if(NOT folder IN_LIST owned)
        message(FATAL_ERROR "core/${folder} (cmake/HydraLayers.cmake) is in no library of core/")
      endif()
    endforeach()
  endforeach()
endfunction()
