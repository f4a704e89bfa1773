// protocol/params.json lists each hydra/* request's params members for the
// editors' mirrors to check against; this holds it to the described structs
// the server reads, so a member added to one and not the other fails here.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/hydra.h"
#include "protocol/lifecycle.h"
#include "protocol/methods.h"

namespace hydra::protocol {
namespace {

namespace json = boost::json;

template <class T>
std::vector<std::string> names() {
  std::vector<std::string> out;
  for (std::string_view n : wireFieldNames<T>()) out.emplace_back(n);
  return out;
}

// The params struct each request is bound to in server/server.cpp.
std::map<std::string, std::vector<std::string>> describedParams() {
  namespace m = method;
  return {
      {std::string(m::kPing), names<PingParams>()},
      {std::string(m::kAgents), {}},
      {std::string(m::kRace), names<RaceParams>()},
      {std::string(m::kCollab), names<CollabParams>()},
      {std::string(m::kStatus), names<StatusParams>()},
      {std::string(m::kCancel), names<CancelRaceParams>()},
      {std::string(m::kScores), names<RaceIdParams>()},
      {std::string(m::kDiff), names<DiffParams>()},
      {std::string(m::kMerge), names<MergeParams>()},
      {std::string(m::kLog), names<LogParams>()},
      {std::string(m::kRaces), names<RacesParams>()},
      {std::string(m::kCleanup), names<CleanupParams>()},
      {std::string(m::kAgentEvents), names<AgentEventsParams>()},
      {std::string(m::kEvalRun), names<EvalRunParams>()},
      {std::string(m::kEvalReport), names<EvalReportParams>()},
      {std::string(m::kEvalCancel), names<EvalIdParams>()},
  };
}

std::map<std::string, std::vector<std::string>> listedParams() {
  std::ifstream in(std::string(HYDRA_SOURCE_DIR) + "/protocol/params.json");
  std::stringstream text;
  text << in.rdbuf();
  json::object file = json::parse(text.str()).as_object();
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& member : file) {
    if (member.key() == "//") continue;
    out[std::string(member.key())] = json::value_to<std::vector<std::string>>(member.value());
  }
  return out;
}

TEST(WireFieldsTest, ParamsJsonListsEveryRequestsDescribedMembers) {
  auto described = describedParams();
  EXPECT_EQ(described.size(), method::kHydraRequests.size());
  for (std::string_view request : method::kHydraRequests) {
    EXPECT_TRUE(described.contains(std::string(request))) << request;
  }
  EXPECT_EQ(listedParams(), described);
}

}  // namespace
}  // namespace hydra::protocol
