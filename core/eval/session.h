#pragma once

// The evaluations of one front end's session (an editor's `hydra serve`, one
// `hydra eval run`), over the session's workspace: each is prepared (its
// request resolved, its runner planned, the other repositories its cases run
// in opened), started unless the same report is still being written, fed the
// ends of its sample races once their records are on disk, cancelled, and
// found again by its id. The front end only shows what the session tells it,
// as typed events (session_events.h).
//
// prepare() runs on any thread (it blocks); everything else on the io thread.

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/eval/runner.h"
#include "core/eval/session_events.h"
#include "core/events/bus.h"
#include "core/workspace/workspace.h"

namespace hydra::core::eval {

class EvalSession {
 public:
  // What the front end hears of one evaluation, on the io thread.
  struct Listener {
    // Before any sample: the evaluation is the session's from here on.
    std::function<void(const EvalStarted&)> started;
    std::function<void(const EvalSampleDone&)> sample;
    std::function<void(const EvalFinished&)> finished;
  };

  // Evaluations run in `workspace`, whose events the front end hands to
  // handle(); a case in another repository runs in a workspace the session
  // opens there with `others`, and follows itself.
  EvalSession(boost::asio::io_context& io, Workspace& workspace, WorkspaceOptions others = {});
  ~EvalSession();
  EvalSession(const EvalSession&) = delete;
  EvalSession& operator=(const EvalSession&) = delete;

  // Resolves the request (relative paths against the repository root) and
  // plans its runner. Throws ConfigError for a missing or broken set,
  // WorkspaceError for a run that cannot start. Blocking; any thread.
  std::shared_ptr<EvalRunner> prepare(const RunRequest& request);

  // Starts a prepared evaluation: `listener.started` is called before this
  // returns, then the samples run (a resumed run with nothing left finishes
  // at once). Throws WorkspaceError (InvalidRequest, data {evalId}) while an
  // evaluation of this session is still writing the same report.
  void start(std::shared_ptr<EvalRunner> runner, Listener listener);

  // Cancels an evaluation of this session: true when it was still running.
  // Throws WorkspaceError (InvalidRequest, data {evalId}) for an unknown id.
  bool cancel(const std::string& evalId);
  // The report an evaluation of this session writes (or wrote); the same
  // error for an unknown id.
  std::filesystem::path reportOf(const std::string& evalId) const;

  // Every event of the session's workspace, in order. True when it is an
  // evaluation's own (a sample race's), which the front end does not show.
  bool handle(const RaceEvent& event);

  // The front end stops: nothing is handed on or told from here on.
  void stop() { stopped_ = true; }
  // The other repositories' workspaces the evaluations opened.
  std::vector<Workspace*> otherWorkspaces();
  // Blocks until every record of every workspace is on disk.
  void flush();

 private:
  struct Live {
    std::shared_ptr<EvalRunner> runner;
    Listener listener;
    double costUsd = 0;
  };
  struct Other {
    std::unique_ptr<Workspace> workspace;
    std::shared_ptr<Subscription> subscription;
  };

  Workspace& other(const std::filesystem::path& root);
  // A sample race of `from` ended: handed to the evaluations once recorded.
  void raceFinished(Workspace& from, const RaceEvent& event);
  Live& live(const std::string& evalId);
  const Live& live(const std::string& evalId) const;

  boost::asio::io_context& io_;
  Workspace& workspace_;
  WorkspaceOptions othersOptions_;
  std::map<std::string, Live> evals_;  // by evalId; kept after they end
  std::set<std::string> sampleRaces_;  // the workspace's races evaluations run
  std::mutex othersMutex_;
  std::map<std::filesystem::path, Other> others_;  // by repository root
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hydra::core::eval
