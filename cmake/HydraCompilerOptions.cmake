# Compiler settings shared by every hydra target, applied through interface
# targets so third-party code is left alone: hydra_flags (warnings,
# sanitizers, the generated headers such as hydra/version.h) for everything,
# and hydra_options, which adds the repository root to the include path, for
# server/, tests/ and bench/. protocol/ and the libraries of core/ link only
# hydra_flags and see the folders they may include through their own include
# root (cmake/HydraIncludeRoots.cmake).

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Paths under the source tree are hashed relative to it, so another clone
  # of the repository (a fresh CI checkout, a second worktree) reuses the
  # objects of the first instead of building everything again.
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1 ${CCACHE_PROGRAM})
endif()

add_library(hydra_flags INTERFACE)
target_compile_options(hydra_flags INTERFACE -Wall -Wextra -Wpedantic)
if(HYDRA_WERROR)
  target_compile_options(hydra_flags INTERFACE -Werror)
endif()
target_include_directories(hydra_flags INTERFACE ${PROJECT_BINARY_DIR}/generated)

add_library(hydra_options INTERFACE)
target_include_directories(hydra_options INTERFACE ${PROJECT_SOURCE_DIR})
target_link_libraries(hydra_options INTERFACE hydra_flags)

if(HYDRA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HYDRA_FUZZ needs clang with libFuzzer: configure with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  # Coverage for libFuzzer in all of hydra's code; the harnesses add
  # -fsanitize=fuzzer (libFuzzer's main) when they link.
  set(_hydra_fuzz -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                  -fno-sanitize-recover=undefined)
  target_compile_options(hydra_flags INTERFACE ${_hydra_fuzz})
  target_link_options(hydra_flags INTERFACE -fsanitize=address,undefined)
endif()

if(HYDRA_SANITIZE)
  set(_hydra_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_options(hydra_flags INTERFACE ${_hydra_san})
  target_link_options(hydra_flags INTERFACE ${_hydra_san})
endif()
