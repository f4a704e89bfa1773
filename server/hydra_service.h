#pragma once

// The hydra/* methods and notifications of one editor session, bound to the
// session's core::Workspace. Nothing here does an operation's work: each
// method decodes its params, calls the workspace (blocking queries on the
// workspace's pool), and encodes the typed result in its one JSON form; every
// refusal becomes a JSON-RPC error in one place (rpc_errors.h). The
// workspace's events become notifications and work-done progress.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/eval/session.h"
#include "core/events/bus.h"
#include "core/workspace/workspace.h"
#include "protocol/hydra.h"
#include "server/dispatcher.h"
#include "server/output_notifier.h"
#include "server/progress.h"
#include "server/transport.h"
#include "server/workspace_folder.h"

namespace hydra::server {

class HydraService {
 public:
  using Reply = Dispatcher::Reply;

  struct Context {
    boost::asio::io_context& io;
    std::shared_ptr<Dispatcher> dispatcher;
    const Transport& transport;
    bool clientCreatesProgress = false;  // capabilities.window.workDoneProgress
    OutputNotifier::Options output;
    core::WorkspaceOptions workspace;
  };

  // Opens the repository containing the client's folder; when there is none,
  // every hydra/* request answers NotARepository.
  HydraService(Context context, WorkspaceFolder folder);
  ~HydraService();
  HydraService(const HydraService&) = delete;
  HydraService& operator=(const HydraService&) = delete;

  // The workspace's pool, when the folder is a repository.
  boost::asio::thread_pool* pool() { return workspace_ ? &workspace_->pool() : nullptr; }

  // What initialize announces as capabilities.hydra.
  protocol::HydraCapabilities capabilities();
  // Once initialize has been answered: says if hydra.toml is broken, and marks
  // races left running by a hydra that died as interrupted.
  void open();

  void agents(Reply reply);
  void race(protocol::RaceParams params, Reply reply);
  void collab(protocol::CollabParams params, Reply reply);
  void status(protocol::StatusParams params, Reply reply);
  void races(protocol::RacesParams params, Reply reply);
  void cancel(protocol::CancelRaceParams params, Reply reply);
  void scores(protocol::RaceIdParams params, Reply reply);
  void diff(protocol::DiffParams params, Reply reply);
  void merge(protocol::MergeParams params, Reply reply);
  void log(protocol::LogParams params, Reply reply);
  void agentEvents(protocol::AgentEventsParams params, Reply reply);
  void cleanup(protocol::CleanupParams params, Reply reply);
  void evalRun(protocol::EvalRunParams params, Reply reply);
  void evalReport(protocol::EvalReportParams params, Reply reply);
  void evalCancel(protocol::EvalIdParams params, Reply reply);
  // window/workDoneProgress/cancel on a race's (an evaluation's) progress
  // cancels the race (the evaluation).
  void progressCancelled(const protocol::ProgressToken& token);

  // The client is gone or the editor closes: every race ends as interrupted
  // and its agents and checks are killed; `done` runs on the io thread once
  // they are gone.
  void stopAll(std::function<void()> done);

 private:
  // A race this session started, until hydra/raceFinished has been sent.
  struct LiveRace {
    std::shared_ptr<WorkDoneProgress> progress;
    std::size_t agents = 0;
    std::size_t finished = 0;
    int maxIterations = 0;  // a collaboration's; 0 for a race
  };

  // The session's evaluations; NotARepository without a workspace.
  core::eval::EvalSession& evalSession();

  core::Workspace& workspace();
  // The prepared evaluation starts: answered, announced, run. io thread.
  void startEval(std::shared_ptr<core::eval::EvalRunner> runner, std::optional<protocol::ProgressToken> token,
                 Reply reply);
  // Runs `fn` (returning the result as JSON) on the workspace's pool and
  // answers from there; a WorkspaceError becomes its RPC error.
  template <class Fn>
  void onPool(Reply reply, Fn fn);
  // Tells the user, once per distinct problem, that hydra.toml is broken
  // (window/showMessage unless `quietly`), and publishes it as a diagnostic.
  void reportConfig(bool quietly = false);
  // `error` as hydra.toml's diagnostic, and (unless `quietly`) shown once per
  // distinct problem; nullopt: the file is fine, and its diagnostic cleared
  // unless it has `warnings` (published as warnings, never shown as a message).
  void tellConfigProblem(const std::optional<core::ConfigError>& error, bool quietly = false,
                         const std::vector<core::ConfigWarning>& warnings = {});
  void tellConfigProblemOf(const core::WorkspaceError& error);
  // hydra.toml is read again every few seconds while the session lasts, so
  // its diagnostics follow the file as the user edits it.
  void watchConfig();
  // Answers a request with a workspace error, from whichever thread.
  void failWith(Reply reply, const core::WorkspaceError& error);
  void showMessage(protocol::MessageType type, std::string message);
  void notify(std::string_view method, boost::json::value params);

  // Bus events, on the io thread.
  void drain();
  void onEvent(core::RaceEvent& event);

  Context ctx_;
  WorkspaceFolder folder_;
  std::unique_ptr<core::Workspace> workspace_;
  std::optional<core::WorkspaceError> noWorkspace_;
  std::string shownConfigProblem_;  // told the user once per distinct problem (io thread)
  std::string diagnosticsUri_;      // the file whose diagnostic was published last (io thread)
  std::string diagnosticsShown_;    // ...and what it said
  std::unique_ptr<boost::asio::steady_timer> configWatch_;
  std::shared_ptr<core::Subscription> subscription_;
  std::unique_ptr<OutputNotifier> output_;
  std::map<std::string, LiveRace> live_;
  std::unique_ptr<core::eval::EvalSession> evals_;
  std::map<std::string, std::shared_ptr<WorkDoneProgress>> evalProgress_;  // by evalId
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hydra::server
