#pragma once

// What an evaluation session tells its front end, each in its one JSON form:
// the answer to a start (hydra/evalRun's result), every finished sample
// (hydra/evalSample) and the end (hydra/evalFinished). docs/protocol.md
// describes the fields; the terminal reads the same structs.

#include <boost/json/value.hpp>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/eval/report.h"

namespace hydra::core::eval {

// How far an evaluation is. `done` and `solved` count every sample in the
// report (a resumed run's earlier ones too); `costUsd` what this run's samples
// cost, as their CLIs reported it.
struct EvalProgress {
  int done = 0;
  int total = 0;
  int solved = 0;
  double costUsd = 0;

  // "3/10 samples · 2 solved · $0.1234"
  std::string line() const;
  // done of total, in percent (0 when there is nothing to do).
  int percentage() const;
};

// An evaluation has started: what runs, and where its report goes.
struct EvalStarted {
  std::string evalId;
  std::string name;  // the set's
  std::filesystem::path report;
  std::size_t cases = 0;
  std::vector<std::string> agents;
  int samples = 0;
  std::vector<int> passK;
  EvalProgress progress;
};

// A sample finished and is in the report.
struct EvalSampleDone {
  std::string evalId;
  Sample sample;
  EvalProgress progress;
};

enum class EvalStatus { Completed, Cancelled };
std::string_view toString(EvalStatus status);

// The evaluation ended: every sample ran, or it was cancelled.
struct EvalFinished {
  std::string evalId;
  EvalStatus status = EvalStatus::Completed;
  std::filesystem::path report;
  EvalProgress progress;
  // The first write that failed, of the report or of a sample's record.
  std::optional<std::string> recordIncomplete;
};

// {evalId, name, report, cases, agents, samples, passK, total, done}
boost::json::value toJson(const EvalStarted& e);
// {evalId, done, total, solved, sample}
boost::json::value toJson(const EvalSampleDone& e);
// {evalId, status, report, done, total, solved, recordIncomplete?}
boost::json::value toJson(const EvalFinished& e);

}  // namespace hydra::core::eval
