// libFuzzer entry point of one adapter's target (see fuzz_checks.h); built
// once per adapter with HYDRA_FUZZ_ADAPTER naming it.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_checks.h"

#ifndef HYDRA_FUZZ_ADAPTER
#error "HYDRA_FUZZ_ADAPTER must name the adapter"
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    hydra::fuzz::adapterStream(HYDRA_FUZZ_ADAPTER,
                               std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const hydra::fuzz::Failure& failure) {
    std::fprintf(stderr, "%s fuzz target: %s\n", HYDRA_FUZZ_ADAPTER, failure.what());
    std::abort();
  }
  return 0;
}
