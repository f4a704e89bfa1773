#pragma once

// The hydra/* methods of one editor session: races started from the editor,
// their notifications and progress, and the review of their results.
//
// Everything here runs on the io thread, like the race engine it drives.
// Work that blocks (git, logs, records, probing agents) goes to the server's
// thread pool through race_queries.h and answers from there.
//
// The race engine scores a race once its agents are done (ScoringStarted on
// the bus, then RaceFinished); the service reports both, reading the scores
// the engine wrote.

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/events/bus.h"
#include "core/race/race.h"
#include "protocol/hydra.h"
#include "server/dispatcher.h"
#include "server/output_notifier.h"
#include "server/progress.h"
#include "server/race_queries.h"
#include "server/transport.h"
#include "server/workspace.h"

namespace hydra::server {

class RaceService {
 public:
  using Reply = Dispatcher::Reply;

  struct Context {
    boost::asio::io_context& io;
    boost::asio::thread_pool& pool;
    std::shared_ptr<Dispatcher> dispatcher;
    const Transport& transport;
    bool clientCreatesProgress = false;  // capabilities.window.workDoneProgress
    OutputNotifier::Options output;
  };

  // Reads hydra.toml of the workspace's repository.
  RaceService(Context context, Workspace workspace);
  ~RaceService();
  RaceService(const RaceService&) = delete;
  RaceService& operator=(const RaceService&) = delete;

  // What initialize announces as capabilities.hydra.
  protocol::HydraCapabilities capabilities() const;
  // Once initialize has been answered: says if hydra.toml is broken, and marks
  // races left running by a hydra that died as interrupted.
  void open();

  void agents(Reply reply);
  void race(protocol::RaceParams params, Reply reply);
  void status(protocol::StatusParams params, Reply reply);
  void races(protocol::RacesParams params, Reply reply);
  void cancel(protocol::CancelRaceParams params, Reply reply);
  void scores(protocol::RaceIdParams params, Reply reply);
  void diff(protocol::DiffParams params, Reply reply);
  void merge(protocol::MergeParams params, Reply reply);
  void log(protocol::LogParams params, Reply reply);
  void cleanup(protocol::CleanupParams params, Reply reply);
  // window/workDoneProgress/cancel on a race's progress cancels the race.
  void progressCancelled(const protocol::ProgressToken& token);

  // The client is gone or the editor closes: every agent and check is killed
  // (SIGTERM, SIGKILL after `grace`) and running races are marked interrupted.
  void stopAll(std::chrono::milliseconds grace);

 private:
  // A race this session started, until hydra/raceFinished has been sent.
  struct LiveRace {
    core::RaceEngine* engine = nullptr;
    std::shared_ptr<WorkDoneProgress> progress;
    std::size_t agents = 0;
    std::size_t finished = 0;
    bool scoring = false;  // its results are being checked
  };

  const std::filesystem::path& requireRoot() const;
  // Re-reads hydra.toml; throws ConfigError when it is broken.
  const core::Config& requireConfig();
  void reloadConfig();
  // The engine for races under `config`: a new one when hydra.toml changed.
  // Engines with nothing running are let go.
  core::RaceEngine& engineFor(const core::Config& config);
  void releaseIdleEngines();
  LiveRaces liveRaces() const;

  // Runs `fn` (returning the result as JSON, or throwing RpcError) on the pool
  // and answers from there.
  template <class Fn>
  void onPool(Reply reply, Fn fn);
  void showMessage(protocol::MessageType type, std::string message);
  void notify(std::string_view method, boost::json::value params);

  // Bus events, on the io thread.
  void drain();
  void on(const core::RaceStarted&) {}
  void on(core::AgentOutput& e) { output_->add(std::move(e)); }
  void on(const core::OutputDropped& e) { output_->dropped(e); }
  void on(const core::AgentStarted& e);
  void on(const core::AgentFinished& e);
  void on(const core::ScoringStarted& e);
  void on(const core::RaceFinished& e);

  void finish(const std::string& raceId, core::RaceStatus status,
              const std::optional<core::scoring::RaceScores>& scores);
  bool cancelRace(const std::string& raceId);

  Context ctx_;
  Workspace workspace_;
  ConfigState config_;
  std::string shownConfigProblem_;  // told the user once per distinct problem
  core::EventBus bus_;
  std::vector<std::unique_ptr<core::RaceEngine>> engines_;  // the last one takes new races
  std::shared_ptr<core::Subscription> subscription_;
  std::unique_ptr<OutputNotifier> output_;
  std::map<std::string, LiveRace> live_;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hydra::server
