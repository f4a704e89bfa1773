#include "core/eval/session_events.h"

#include <boost/json/value_from.hpp>
#include <cstdio>

namespace hydra::core::eval {

namespace json = boost::json;

std::string EvalProgress::line() const {
  char cost[32];
  std::snprintf(cost, sizeof cost, "$%.4f", costUsd);
  return std::to_string(done) + "/" + std::to_string(total) + " samples · " + std::to_string(solved) + " solved · " +
         cost;
}

int EvalProgress::percentage() const { return total > 0 ? done * 100 / total : 0; }

std::string_view toString(EvalStatus status) {
  return status == EvalStatus::Cancelled ? "cancelled" : "completed";
}

json::value toJson(const EvalStarted& e) {
  json::array agents;
  for (const auto& a : e.agents) agents.emplace_back(a);
  json::array passK;
  for (int k : e.passK) passK.emplace_back(k);
  return json::object{{"evalId", e.evalId},
                      {"name", e.name},
                      {"report", e.report.string()},
                      {"cases", e.cases},
                      {"agents", std::move(agents)},
                      {"samples", e.samples},
                      {"passK", std::move(passK)},
                      {"total", e.progress.total},
                      {"done", e.progress.done}};
}

json::value toJson(const EvalSampleDone& e) {
  return json::object{{"evalId", e.evalId},
                      {"done", e.progress.done},
                      {"total", e.progress.total},
                      {"solved", e.progress.solved},
                      {"sample", json::value_from(e.sample)}};
}

json::value toJson(const EvalFinished& e) {
  json::object params{{"evalId", e.evalId},          {"status", toString(e.status)},
                      {"report", e.report.string()}, {"done", e.progress.done},
                      {"total", e.progress.total},   {"solved", e.progress.solved}};
  if (e.recordIncomplete) params["recordIncomplete"] = *e.recordIncomplete;
  return params;
}

}  // namespace hydra::core::eval
