#include "protocol/hydra.h"

namespace hydra::protocol {

namespace {

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

void checkExecutor(const std::optional<std::string>& executor) {
  if (executor && *executor != "local" && *executor != "slurm")
    throw ParamError("executor", "must be \"local\" or \"slurm\" (leave it out for [executor] kind)");
}

}  // namespace

void checkWire(const RaceParams& x) {
  if (blank(x.task)) throw ParamError("task", "must not be empty");
  if (x.agents.empty()) throw ParamError("agents", "name at least one agent");
  for (std::size_t i = 0; i < x.agents.size(); ++i) {
    if (x.agents[i].empty())
      throw ParamError("agents[" + std::to_string(i) + "]", "must not be empty");
  }
  if (x.base && x.base->empty())
    throw ParamError("base", "must not be empty (leave it out for HEAD)");
  checkExecutor(x.executor);
}

void checkWire(const CollabParams& x) {
  if (blank(x.task)) throw ParamError("task", "must not be empty");
  if (x.builder && x.builder->empty()) throw ParamError("builder", "must not be empty");
  if (x.reviewer && x.reviewer->empty()) throw ParamError("reviewer", "must not be empty");
  if (x.maxIterations && *x.maxIterations < 1) throw ParamError("maxIterations", "must be at least 1");
  if (x.untilScore && (*x.untilScore < 0 || *x.untilScore > 100))
    throw ParamError("untilScore", "must be between 0 and 100");
  if (x.base && x.base->empty())
    throw ParamError("base", "must not be empty (leave it out for HEAD)");
  checkExecutor(x.executor);
}

void checkWire(const RacesParams& x) {
  if (x.offset < 0) throw ParamError("offset", "must not be negative");
  if (x.limit < 1 || x.limit > 500) throw ParamError("limit", "must be between 1 and 500");
}

void checkWire(const LogParams& x) {
  if (x.stream != "stdout" && x.stream != "stderr")
    throw ParamError("stream", "must be stdout or stderr");
  if (x.limit && *x.limit == 0) throw ParamError("limit", "must be positive");
}

void checkWire(const AgentEventsParams& x) {
  if (x.limit && *x.limit == 0) throw ParamError("limit", "must be positive");
}

void checkWire(const EvalRunParams& x) {
  if (blank(x.set)) throw ParamError("set", "must name an eval set file");
  for (std::size_t i = 0; i < x.agents.size(); ++i) {
    if (x.agents[i].empty()) throw ParamError("agents[" + std::to_string(i) + "]", "must not be empty");
  }
  if (x.samples && *x.samples < 1) throw ParamError("samples", "must be at least 1");
  for (std::size_t i = 0; i < x.passK.size(); ++i) {
    if (x.passK[i] < 1) throw ParamError("passK[" + std::to_string(i) + "]", "must be at least 1");
  }
  if (x.out && blank(*x.out)) throw ParamError("out", "must not be empty (leave it out for the default)");
  if (x.resume && blank(*x.resume)) throw ParamError("resume", "must name a report");
  checkExecutor(x.executor);
}

void checkWire(const EvalReportParams& x) {
  if (x.format != "json" && x.format != "text" && x.format != "markdown") {
    throw ParamError("format", "must be json, text or markdown");
  }
  if (x.report && x.evalId) throw ParamError("report", "name a report or an evalId, not both");
  if (x.report && blank(*x.report)) throw ParamError("report", "must name a report");
  if (x.evalId && x.evalId->empty()) throw ParamError("evalId", "must not be empty");
}

void checkWire(const EvalIdParams& x) {
  if (x.evalId.empty()) throw ParamError("evalId", "must not be empty");
}

}  // namespace hydra::protocol
