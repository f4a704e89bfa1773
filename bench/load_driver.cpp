// Load driver: the real `hydra serve` over pipes. Sends hydra/ping requests
// with a window of requests in flight and reports round-trip latency
// percentiles and throughput.
//
//   load_driver [--requests N] [--window W] [--payload BYTES] [--hydra PATH]

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>

#include "protocol/framing.h"
#include "tests/e2e/hydra_process.h"

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  CLI::App app{"Round-trip latency and throughput of hydra serve"};
  int requests = 20000;
  int window = 1;
  std::size_t payload = 16;
  app.add_option("--requests", requests, "Requests to send")->check(CLI::PositiveNumber);
  app.add_option("--window", window, "Requests in flight at once")->check(CLI::PositiveNumber);
  app.add_option("--payload", payload, "Bytes of data echoed by each ping");
  CLI11_PARSE(app, argc, argv);

  hydra::test::HydraProcess hydra({"serve", "--log-level", "warn"});
  hydra.request(0, "initialize", json::object{{"capabilities", json::object{}}});
  if (!hydra.responseTo(0)) {
    std::fprintf(stderr, "hydra did not answer initialize\n%s", hydra.stderrText().c_str());
    return 1;
  }
  std::string data(payload, 'x');

  std::map<std::int64_t, Clock::time_point> inFlight;
  std::vector<double> latenciesUs;
  latenciesUs.reserve(static_cast<std::size_t>(requests));
  std::int64_t nextId = 1;
  auto start = Clock::now();
  while (static_cast<int>(latenciesUs.size()) < requests) {
    while (static_cast<int>(inFlight.size()) < window && nextId <= requests) {
      inFlight[nextId] = Clock::now();
      hydra.request(nextId, "hydra/ping", json::object{{"data", data}});
      ++nextId;
    }
    auto m = hydra.receive(std::chrono::seconds(30));
    if (!m) {
      std::fprintf(stderr, "no answer after %zu responses\n", latenciesUs.size());
      return 1;
    }
    auto it = inFlight.find(m->at("id").as_int64());
    if (it == inFlight.end()) continue;
    latenciesUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - it->second).count());
    inFlight.erase(it);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  hydra.request(nextId, "shutdown", nullptr);
  hydra.responseTo(nextId);
  hydra.notify("exit", nullptr);
  hydra.waitExit();

  std::sort(latenciesUs.begin(), latenciesUs.end());
  auto pct = [&](double p) { return latenciesUs[static_cast<std::size_t>(p * (latenciesUs.size() - 1))]; };
  std::printf("requests=%d window=%d payload=%zu  p50=%.1fus p99=%.1fus max=%.1fus  throughput=%.0f req/s  %.1f MB/s\n",
              requests, window, payload, pct(0.50), pct(0.99), latenciesUs.back(), requests / seconds,
              requests * static_cast<double>(payload) * 2 / seconds / 1e6);
  return 0;
}
