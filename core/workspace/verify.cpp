// Verifying an agent's result with a command of its own, in a fresh checkout
// of its commit with files added first: an evaluation's verify_command with
// the case's hidden files, which the agent never saw.

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "core/checks/check_set.h"
#include "core/executor/from_config.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/probe.h"
#include "core/util/paths.h"
#include "core/workspace/workspace.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

void Workspace::startVerify(VerifyRequest request, std::function<void(scoring::CheckResult)> done) {
  asio::post(pool_, [this, request = std::move(request), done = std::move(done)]() mutable {
    std::optional<Worktree> wt;
    WorktreeManager* worktrees = nullptr;
    std::shared_ptr<const sandbox::SandboxDecision> sandbox;
    std::shared_ptr<Executor> executor;
    std::string error;
    try {
      RaceRecord race = record(request.raceId);
      AgentRecord agent = withResult(race, request.agentId);
      auto config = this->config();
      auto mode =
          sandbox::parseSandboxMode(config->general.sandbox).value_or(sandbox::SandboxMode::Auto);
      sandbox = std::make_shared<const sandbox::SandboxDecision>(
          sandbox::decideSandbox(mode, sandbox::cachedSandboxProbe()));
      worktrees = &worktreesFor(config->general.workspaceDir);
      // Where the race's own checks ran.
      executor = executorFromConfig(config->executor, race.executor, worktrees->workspaceDir(), root_);
      // Fresh, never from the pool: the verdict must not depend on what an earlier agent kept.
      wt = worktrees->create("_verify-" + request.agentId, *agent.commit, request.raceId, false);
      for (const auto& file : request.files) {
        // The files are the caller's; where they go must stay inside the checkout.
        auto target = resolveInside(wt->path, file);
        if (!target) throw std::runtime_error("'" + file + "' would land outside the checkout");
        fs::create_directories(target->parent_path());
        fs::copy_file(request.filesFrom / file, *target, fs::copy_options::overwrite_existing);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(io_, [this, request = std::move(request), done = std::move(done), wt, worktrees,
                     sandbox, executor, error]() mutable {
      auto finish = [this, wt, worktrees,
                     done = std::move(done)](scoring::CheckResult result) mutable {
        asio::post(pool_, [this, wt, worktrees, result = std::move(result),
                           done = std::move(done)]() mutable {
          if (wt) {
            try {
              worktrees->remove(*wt, true);
            } catch (const std::exception& e) {
              spdlog::warn("could not remove the verification checkout {}: {}", wt->path.string(),
                           e.what());
            }
          }
          asio::post(io_, [result = std::move(result), done = std::move(done)] { done(result); });
        });
      };
      if (!error.empty()) {
        scoring::CheckResult failed;
        failed.command = request.command;
        failed.error = error;
        finish(std::move(failed));
        return;
      }
      CheckSetSpec spec;
      spec.raceId = request.raceId;
      spec.subject = "verify-" + request.agentId;
      spec.checkout = wt->path;
      spec.config.testCommand = request.command;
      spec.config.timeoutPerCheckSeconds = request.timeoutSeconds;
      spec.sandbox = sandbox;
      spec.executor = executor;
      // Its output is in its result; the race it belongs to is over and recorded.
      auto run = std::make_shared<std::shared_ptr<CheckSetRun>>();
      *run = CheckSetRun::start(
          io_, [](RaceEventBody) {}, std::make_shared<const Redactor>(std::vector<std::string>{}),
          std::move(spec),
          [this, run, finish = std::move(finish),
           command = request.command](scoring::CheckSet checks) mutable {
            scoring::CheckResult result = checks.tests.value_or(scoring::CheckResult{});
            if (result.command.empty()) result.command = command;
            finish(std::move(result));
            // Let go later, not inside its own callback.
            asio::post(io_, [run] { run->reset(); });
          });
    });
  });
}

}  // namespace hydra::core
