#pragma once

// `hydra eval init` on disk: a new eval set in the repository, either a
// template or one case taken from a race (init.h renders both). From a race,
// the case is the race's task and base commit, and the test files the chosen
// agent (the user's merged pick, else the best agent without flags) added or
// changed are copied beside the set as its hidden files.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/eval_set.h"
#include "core/eval/init.h"
#include "core/workspace/workspace.h"

namespace hydra::core::eval {

struct InitRequest {
  std::optional<std::filesystem::path> path;  // default: evals/NAME/eval.toml in the repository
  std::optional<std::string> fromRace;        // a race id, a start of one, or `latest`
  std::optional<std::string> agent;           // whose tests become hidden files (default: the winner)
  std::optional<std::string> name;            // default: from the race's task, or the repository's name
  std::vector<std::string> agents;            // the set's agents (default: the race's, or hydra.toml's)
  std::optional<std::string> verifyCommand;   // default: [scoring] test_command (after build_command, from a race)
  bool force = false;                         // replace the set and hidden files that exist
};

// A hidden file taken from a race: its path relative to the set's folder, and
// what the agent's commit holds there.
struct HiddenFile {
  std::string path;
  std::string contents;
};

// The case a race gives: the case itself, its hidden files' contents, and
// the race's agents (a collaboration's builder, not its reviewer).
struct TakenCase {
  RaceCase evalCase;
  std::vector<HiddenFile> hidden;
  std::vector<std::string> agents;
};

// Takes the case from race `raceId` as `agentId` (default: the merged agent,
// else the best one without flags) left it. Throws WorkspaceError: an
// unknown race, no winner and no agent named, an agent (or iteration) that
// left no commit. Blocking.
TakenCase caseFromRace(Workspace& workspace, const std::string& raceId, const std::optional<std::string>& agentId,
                       const std::string& verifyCommand);

// What was written.
struct InitResult {
  std::filesystem::path path;  // the set's file
  EvalSet set;                 // as it reads back
  std::optional<TakenCase> fromRace;
};

// Writes the new set (and, from a race, its hidden files beside it). Throws
// WorkspaceError (InvalidRequest) for a request that cannot be made (no
// verify command, a name with a slash, a file that exists without `force`),
// and what caseFromRace throws. Blocking.
InitResult initSet(Workspace& workspace, const InitRequest& request);

}  // namespace hydra::core::eval
