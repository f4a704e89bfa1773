#include "core/eval/session.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/json/value.hpp>
#include <utility>
#include <variant>

#include "core/workspace/errors.h"

namespace hydra::core::eval {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

WorkspaceError unknownEval(const std::string& evalId) {
  return WorkspaceError(WorkspaceError::Kind::InvalidRequest, "no evaluation '" + evalId + "' in this session",
                        json::object{{"evalId", evalId}});
}

}  // namespace

EvalSession::EvalSession(asio::io_context& io, Workspace& workspace, WorkspaceOptions others)
    : io_(io), workspace_(workspace), othersOptions_(std::move(others)) {}

EvalSession::~EvalSession() {
  *alive_ = false;
  evals_.clear();
  std::lock_guard lock(othersMutex_);
  for (auto& [root, other] : others_) other.subscription.reset();
  others_.clear();  // like any workspace: what still runs there is interrupted
}

std::shared_ptr<EvalRunner> EvalSession::prepare(const RunRequest& request) {
  RunOptions options = resolve(request, workspace_.root());
  return EvalRunner::prepare(workspace_, std::move(options),
                             [this](const fs::path& root) -> Workspace& { return other(root); });
}

void EvalSession::start(std::shared_ptr<EvalRunner> runner, Listener listener) {
  const RunOptions& options = runner->options();
  const std::string id = evalId(options);
  if (auto it = evals_.find(id); it != evals_.end() && !it->second.runner->finished()) {
    throw WorkspaceError(WorkspaceError::Kind::InvalidRequest,
                         "evaluation " + id + " is already writing " + options.out.string() +
                             "; wait for it or cancel it",
                         json::object{{"evalId", id}});
  }
  evals_[id] = Live{runner, std::move(listener), 0};

  EvalStarted started{id,
                      options.set.name,
                      options.out,
                      options.set.cases.size(),
                      options.agents,
                      options.samples,
                      options.passK,
                      EvalProgress{runner->done(), runner->total(), runner->solved(), 0}};
  // Called once, while the caller's frame is there: what it holds is let go.
  if (auto onStarted = std::exchange(evals_[id].listener.started, nullptr)) onStarted(started);

  runner->run(
      [this, alive = alive_, id](const Sample& sample, int done, int total) {
        if (!*alive || stopped_) return;
        auto it = evals_.find(id);
        if (it == evals_.end()) return;
        Live& e = it->second;
        e.costUsd += sample.costUsd.value_or(0.0);
        if (e.listener.sample) e.listener.sample(EvalSampleDone{id, sample, {done, total, e.runner->solved(), e.costUsd}});
      },
      [this, alive = alive_, id](const Report&) {
        if (!*alive || stopped_) return;
        auto it = evals_.find(id);
        if (it == evals_.end()) return;
        Live& e = it->second;
        EvalFinished finished{id,
                              e.runner->cancelled() ? EvalStatus::Cancelled : EvalStatus::Completed,
                              e.runner->options().out,
                              {e.runner->done(), e.runner->total(), e.runner->solved(), e.costUsd},
                              e.runner->recordFailure()};
        if (e.listener.finished) e.listener.finished(finished);
      });
}

EvalSession::Live& EvalSession::live(const std::string& evalId) {
  auto it = evals_.find(evalId);
  if (it == evals_.end()) throw unknownEval(evalId);
  return it->second;
}

const EvalSession::Live& EvalSession::live(const std::string& evalId) const {
  auto it = evals_.find(evalId);
  if (it == evals_.end()) throw unknownEval(evalId);
  return it->second;
}

bool EvalSession::cancel(const std::string& evalId) {
  Live& e = live(evalId);
  if (e.runner->finished()) return false;
  spdlog::info("evaluation {} cancelled", evalId);
  e.runner->cancel();
  return true;
}

fs::path EvalSession::reportOf(const std::string& evalId) const { return live(evalId).runner->options().out; }

bool EvalSession::handle(const RaceEvent& event) {
  const std::string& raceId = raceIdOf(event.body);
  if (const auto* started = std::get_if<RaceStarted>(&event.body); started && started->kind == RunKind::Sample) {
    sampleRaces_.insert(started->raceId);
  }
  if (!sampleRaces_.contains(raceId)) return false;
  if (std::holds_alternative<RaceFinished>(event.body)) {
    sampleRaces_.erase(raceId);
    raceFinished(workspace_, event);
  }
  return true;
}

void EvalSession::raceFinished(Workspace& from, const RaceEvent& event) {
  // A runner reads the sample's record: it waits until that is on disk.
  from.whenRecorded([this, alive = alive_, from = &from, event] {
    if (!*alive || stopped_) return;
    for (auto& [id, e] : evals_) {
      if (!e.runner->finished()) e.runner->handle(*from, event);
    }
  });
}

Workspace& EvalSession::other(const fs::path& root) {
  std::lock_guard lock(othersMutex_);
  Other& other = others_[root];
  if (other.workspace) return *other.workspace;
  auto ws = std::make_unique<Workspace>(io_, root, othersOptions_);
  try {
    ws->recover();
  } catch (const std::exception& e) {
    spdlog::warn("could not recover races left in {} by an earlier hydra: {}", root.string(), e.what());
  }
  spdlog::info("eval cases also run in {}", ws->root().string());
  Workspace* raw = ws.get();
  // Its samples end the way the session workspace's do: recorded, then handed on.
  other.subscription = raw->bus().subscribe(SubscriptionOptions{
      .maxEvents = 4096,
      .maxBytes = 4 * 1024 * 1024,
      .onReady =
          [this, alive = alive_, raw, root] {
            asio::post(io_, [this, alive, raw, root] {
              if (!*alive || stopped_) return;
              std::shared_ptr<Subscription> subscription;
              {
                std::lock_guard lock(othersMutex_);
                subscription = others_[root].subscription;
              }
              if (!subscription) return;  // being set up: it drains what came at the next wake-up
              for (auto& event : subscription->drain()) {
                if (std::holds_alternative<RaceFinished>(event.body)) raceFinished(*raw, event);
              }
            });
          },
  });
  other.workspace = std::move(ws);
  return *raw;
}

std::vector<Workspace*> EvalSession::otherWorkspaces() {
  std::lock_guard lock(othersMutex_);
  std::vector<Workspace*> out;
  for (auto& [root, other] : others_) out.push_back(other.workspace.get());
  return out;
}

void EvalSession::flush() {
  workspace_.flush();
  for (Workspace* ws : otherWorkspaces()) ws->flush();
}

}  // namespace hydra::core::eval
