// libFuzzer entry point of the test-output target (see fuzz_checks.h).

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    hydra::fuzz::testOutput(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const hydra::fuzz::Failure& failure) {
    std::fprintf(stderr, "tests fuzz target: %s\n", failure.what());
    std::abort();
  }
  return 0;
}
