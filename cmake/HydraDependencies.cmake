# Every dependency comes from a Debian 12 package (scripts/install-deps.sh).

# Debian 12's default Boost is 1.74, which has no usable Process v2.
set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.81 EXACT REQUIRED COMPONENTS json filesystem)
find_package(tomlplusplus REQUIRED)
find_package(spdlog REQUIRED)
find_package(pugixml REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
# SHA-1 for the index files hydra patches itself (core/git/index_file.cpp).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)

if(HYDRA_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HYDRA_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# Boost.Asio is header-only; these definitions keep it lean and modern.
add_library(hydra_boost INTERFACE)
target_link_libraries(hydra_boost INTERFACE Boost::headers Boost::json Boost::filesystem Threads::Threads)
target_compile_definitions(hydra_boost INTERFACE
  BOOST_ASIO_NO_DEPRECATED
  BOOST_ASIO_DISABLE_BOOST_COROUTINE)
