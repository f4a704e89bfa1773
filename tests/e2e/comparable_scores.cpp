#include "tests/e2e/comparable_scores.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <utility>
#include <vector>

namespace hydra::test {

namespace json = boost::json;

json::value comparable(const json::value& v, const std::set<std::string>& alsoVarying) {
  static const std::set<std::string> kVarying{"speed", "total", "rank", "winner", "durationMs", "output", "fromCache",
                                               "outputTruncated", "raceId", "commit"};
  if (v.is_object()) {
    json::object out;
    for (const auto& [key, value] : v.as_object()) {
      const std::string name(key);
      if (!kVarying.contains(name) && !alsoVarying.contains(name)) out[key] = comparable(value, alsoVarying);
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const auto& e : v.as_array()) out.push_back(comparable(e, alsoVarying));
    std::stable_sort(out.begin(), out.end(), [](const json::value& a, const json::value& b) {
      const auto id = [](const json::value& x) {
        const json::value* agent = x.is_object() ? x.as_object().if_contains("agentId") : nullptr;
        return agent && agent->is_string() ? std::string(agent->as_string()) : std::string();
      };
      return id(a) < id(b);
    });
    return out;
  }
  return v;
}

void expectChecksRan(const json::object& scores) {
  auto checksOf = [](const json::object& subject) -> const json::object& { return subject.at("checks").as_object(); };
  std::vector<std::pair<std::string, const json::object*>> subjects;
  ASSERT_TRUE(scores.at("baseline").is_object()) << json::serialize(scores);
  subjects.emplace_back("baseline", &checksOf(scores.at("baseline").as_object()));
  for (const auto& r : scores.at("rankings").as_array()) {
    subjects.emplace_back(std::string(r.at("agentId").as_string()), &checksOf(r.as_object()));
  }
  for (const auto& [subject, checks] : subjects) {
    for (const auto& [name, check] : *checks) {
      if (check.is_null()) continue;  // not configured
      const json::object& c = check.as_object();
      EXPECT_FALSE(c.contains("error")) << subject << " " << name << ": " << json::serialize(c);
    }
  }
}

}  // namespace hydra::test
