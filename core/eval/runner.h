#pragma once

// Running an eval set: every case x agent x sample as an agent run of its
// own, contained like every agent run (each sample is a one-agent race of
// kind "sample": its own worktree at the case's base, confinement,
// supervision, records, logs and hydra's scoring), then verified: the case's
// hidden files are copied into a fresh checkout of the sample's commit (after
// the agent is gone, so it never saw them) and `verify_command` decides
// whether it is solved. The report is written after every sample, so an
// interrupted run keeps every finished sample and can be resumed.
// io thread only.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/eval_set.h"
#include "core/eval/report.h"
#include "core/events/events.h"
#include "core/workspace/workspace.h"

namespace hydra::core::eval {

// What to run, as the terminal and the protocol ask for it: the set's file
// and what overrides its [eval] defaults.
struct RunRequest {
  std::filesystem::path set;        // relative to the repository root
  std::vector<std::string> agents;  // empty: the set's
  std::optional<int> samples;       // the set's when absent
  std::vector<int> passK;           // empty: the set's
  std::optional<std::filesystem::path> out;     // default: .hydra/evals/NAME-TIME.json (or `resume`)
  std::optional<std::filesystem::path> resume;  // a report of an unfinished run of the same set
  std::string hydraVersion;
  std::optional<ExecutorKind> executor;  // default: each case repository's [executor] kind
};

struct RunOptions {
  EvalSet set;
  std::vector<std::string> agents;  // the agent names to run (the set's, unless overridden)
  int samples = 1;
  std::vector<int> passK{1};
  std::filesystem::path out;        // the report, written after every sample
  std::optional<Report> resumeFrom;  // the samples already done
  std::string hydraVersion;
  std::optional<ExecutorKind> executor;  // where the samples run, instead of [executor] kind
};

// The set read and the request's defaults filled in. Throws ConfigError for a
// broken set, WorkspaceError (InvalidRequest) for a resume report that cannot
// be read or is another set's. Blocking (reads files); any thread.
RunOptions resolve(const RunRequest& request, const std::filesystem::path& root);

// An evaluation's id: its report's file name without ".json".
std::string evalId(const RunOptions& options);

class EvalRunner : public std::enable_shared_from_this<EvalRunner> {
 public:
  // A sample finished: it, and how many of how many are done.
  using OnSample = std::function<void(const Sample&, int done, int total)>;
  // Every sample is done, or the run was cancelled: the report as written.
  using Done = std::function<void(const Report&)>;

  // Checks the cases (their repository must be the workspace's, their bases
  // must resolve) and the agents (known and installed), and plans the
  // samples still to run. Throws WorkspaceError for a run that cannot start.
  // Blocking (probes every agent's version): any thread, e.g. the pool.
  //
  // A case whose `repo` is another repository runs in that repository's
  // workspace, which `others` opens (or gives again) for its top folder; it
  // must be kept open, its events handed to handle(from, event), for as long
  // as the runner lives. Without `others` such a case is refused.
  using WorkspaceFor = std::function<Workspace&(const std::filesystem::path& root)>;
  static std::shared_ptr<EvalRunner> prepare(Workspace& workspace, RunOptions options,
                                             const WorkspaceFor& others = {});
  // Writes the report as it stands and starts the first samples; `done` may
  // run before this returns when nothing is left to do. io thread.
  void run(OnSample onSample, Done done);

  // Every event of the workspace's bus, in order: the samples' ends; and
  // those of every workspace `others` gave.
  void handle(const RaceEvent& event);
  void handle(const Workspace& from, const RaceEvent& event);
  // Stops: the running samples are cancelled and left out; the report keeps
  // every finished one.
  void cancel();
  bool finished() const { return finished_; }
  bool cancelled() const { return cancelled_; }

  const RunOptions& options() const { return options_; }
  const Report& report() const { return report_; }
  // Samples in the report (a resumed run's too), of total(), and how many solved.
  int done() const { return static_cast<int>(report_.samples.size()); }
  int total() const { return total_; }
  int solved() const;
  // What of the run could not be written in full, naming the file and why:
  // the report when its last write failed (each write is whole, so a later
  // one that succeeds makes up for an earlier failure), else the first
  // sample race whose record failed. nullopt when everything is on disk.
  // Call once the workspaces have flushed their records.
  std::optional<std::string> recordFailure() const;

 private:
  struct Job {
    const EvalCase* evalCase = nullptr;
    std::string agent;
    int index = 0;
    std::string raceId;  // once its race started
  };

  EvalRunner(Workspace& workspace, RunOptions options);
  void next();
  void launch(std::size_t job);
  void raceOver(std::size_t job, const RaceFinished& finished);
  void verified(std::size_t job, const RaceFinished& finished, const AgentRecord& agent,
                std::optional<scoring::CheckResult> verification);
  void record(Sample sample);
  void write();
  void finishIfDone();

  Workspace& workspace_;
  RunOptions options_;
  OnSample onSample_;
  Done done_;
  Report report_;
  std::vector<Job> jobs_;        // the samples still to run, in order
  std::size_t nextJob_ = 0;
  std::map<std::string, Workspace*> workspaces_;  // case id -> where it runs
  std::map<std::pair<const Workspace*, std::string>, std::size_t> running_;  // (workspace, race id) -> job
  std::size_t starting_ = 0;     // jobs whose race is being planned
  std::size_t busy_ = 0;         // jobs being verified
  int total_ = 0;
  int limit_ = 1;
  bool cancelled_ = false;
  bool finished_ = false;
  std::optional<std::string> writeFailure_;  // why the last write of the report failed
};

}  // namespace hydra::core::eval
