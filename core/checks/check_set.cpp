#include "core/checks/check_set.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/sandbox/sandboxed.h"
#include "core/scoring/parsers.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The output of one check as it arrives: its end, for the parsers and the result.
struct Tail {
  std::string text;
  std::size_t totalBytes = 0;
  std::size_t cap = 0;
  Redactor::LineState out, err;

  void add(const std::string& line) {
    totalBytes += line.size() + 1;
    text += line;
    text += '\n';
    if (text.size() > cap + cap / 4) text.erase(0, text.size() - cap);
  }
};

// Whether `relative` names a place inside `checkout` reached without going
// through a symlink: the checkout is the agent's work, and a symlinked folder
// there could point anywhere. The last component may be missing.
bool reachableWithoutSymlinks(const fs::path& checkout, const fs::path& relative) {
  fs::path at = checkout;
  for (const fs::path& part : relative) {
    at /= part;
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(at, ec);
    if (ec || status.type() == fs::file_type::not_found) return true;
    if (status.type() == fs::file_type::symlink) return false;
  }
  return true;
}

// An environment variable of options for a test check: the options hydra
// itself was started with in `name` (a user's, say PYTEST_ADDOPTS="-p xdist"
// or GOFLAGS=-mod=vendor), then hydra's own.
std::string withInheritedOptions(const char* name, const std::string& ours) {
  const char* inherited = std::getenv(name);
  return (inherited && *inherited ? std::string(inherited) + " " : std::string()) + ours;
}

}  // namespace

const char* checkName(int step) {
  switch (step) {
    case 0: return "build";
    case 1: return "tests";
    case 2: return "lint";
  }
  return "check";
}

CheckSetRun::CheckSetRun(asio::io_context& io, Publish publish, std::shared_ptr<const Redactor> redactor,
                         CheckSetSpec spec, Done done)
    : io_(io), publish_(std::move(publish)), redactor_(std::move(redactor)), spec_(std::move(spec)), done_(std::move(done)) {}

std::shared_ptr<CheckSetRun> CheckSetRun::start(asio::io_context& io, Publish publish,
                                                std::shared_ptr<const Redactor> redactor, CheckSetSpec spec,
                                                Done done) {
  std::shared_ptr<CheckSetRun> run(
      new CheckSetRun(io, std::move(publish), std::move(redactor), std::move(spec), std::move(done)));
  // Posted, so `done` never runs inside start().
  asio::post(io, [run] { run->next(Step::Build); });
  return run;
}

void CheckSetRun::cancel() {
  cancelled_ = true;
  if (current_) current_->cancel();
}

std::optional<pid_t> CheckSetRun::processGroup() const {
  if (current_ && current_->pid() > 0) return current_->pid();  // it leads its group
  return std::nullopt;
}

void CheckSetRun::next(Step step) {
  const ScoringConfig& c = spec_.config;
  bool buildFailed = results_.build && !results_.build->passed();
  auto skip = [](const std::string& command) {
    scoring::CheckResult r;
    r.command = command;
    r.skipped = true;
    return r;
  };
  for (;; step = static_cast<Step>(static_cast<int>(step) + 1)) {
    const std::optional<std::string>* command = nullptr;
    std::optional<scoring::CheckResult>* slot = nullptr;
    switch (step) {
      case Step::Build: command = &c.buildCommand; slot = &results_.build; break;
      case Step::Tests: command = &c.testCommand; slot = &results_.tests; break;
      case Step::Lint: command = &c.lintCommand; slot = &results_.lint; break;
      case Step::Done: {
        auto done = std::move(done_);
        if (done) done(std::move(results_));
        return;
      }
    }
    if (!*command) continue;
    if (step != Step::Build && buildFailed) {
      *slot = skip(**command);
      continue;
    }
    if (cancelled_) {
      scoring::CheckResult r;
      r.command = **command;
      r.error = "cancelled";
      *slot = std::move(r);
      continue;
    }
    run(step, **command);
    return;
  }
}

void CheckSetRun::run(Step step, const std::string& command) {
  std::string check = checkName(static_cast<int>(step)) + spec_.checkNameSuffix;
  auto tail = std::make_shared<Tail>();
  tail->cap = spec_.parsedOutputBytes;

  ProcessSpec process;
  process.program = "/bin/sh";
  process.args = {"-c", command};
  process.cwd = spec_.checkout;
  // Test runners that watch by default (jest, vitest) run once under CI.
  // The plain name: nothing the build runs can tell a second run from the first.
  process.env = {{"CI", "true"}, {"HYDRA_CHECK", checkName(static_cast<int>(step))}};
  // Tests are compared by name (scoring::compareTests): pytest is asked to
  // name each test's verdict even when the configured command does not
  // (`pytest -q` names only the failures, so a deleted test would read as a
  // passing one). Its own options come after these, so a command's -r wins.
  // pytest gets -rA (every verdict in the short summary, by node id) and -vvv
  // (a line per test: the summary names a skip only by file and line, the
  // verbose line by node id, so a test that failed at the base and is skipped
  // now is named as skipped; three, so that a command's -q or -qq still leaves
  // pytest verbose).
  // go test gets -v through GOFLAGS: plain `go test` names only failing tests
  // and counts per package, so a failing test deleted from a package would
  // read as the package fixed. The go command applies a GOFLAGS flag only to
  // the commands that define it, and -v rather than -json keeps the output a
  // log to read and what a `| go-junit-report` pipe expects.
  if (step == Step::Tests) {
    process.env["PYTEST_ADDOPTS"] = withInheritedOptions("PYTEST_ADDOPTS", "-rA -vvv");
    process.env["GOFLAGS"] = withInheritedOptions("GOFLAGS", "-v");
  }
  process.timeout = std::chrono::seconds(spec_.config.timeoutPerCheckSeconds);
  process.killGrace = std::chrono::seconds(2);
  try {
    process = sandbox::sandboxed(std::move(process), spec_.sandbox.get(), spec_.checkout);
  } catch (const std::exception& e) {
    scoring::CheckResult r;
    r.command = command;
    r.error = std::string("could not set up its sandbox: ") + e.what();
    auto self = shared_from_this();
    asio::post(io_, [self, step, r = std::move(r)]() mutable { self->finished(step, std::move(r)); });
    return;
  }

  // The report must be the one this run writes: a stale or committed one
  // would be read if the test command failed before writing its own.
  if (step == Step::Tests && spec_.config.junitReport &&
      reachableWithoutSymlinks(spec_.checkout, fs::path(*spec_.config.junitReport).parent_path())) {
    std::error_code ignored;
    fs::remove(spec_.checkout / *spec_.config.junitReport, ignored);  // a symlink itself, never its target
  }

  auto self = shared_from_this();
  auto started = std::chrono::steady_clock::now();
  Executor& executor = spec_.executor ? *spec_.executor : *localExecutor();
  current_ = executor.start(
      io_, std::move(process),
      [self, tail, check](OutputStream stream, std::string line) {
        line = self->redactor_->redactLine(line, stream == OutputStream::Stdout ? tail->out : tail->err);
        tail->add(line);
        self->publish_(CheckOutput{self->spec_.raceId, self->spec_.subject, check, stream, std::move(line)});
      },
      [self, tail, step, command, started](const ProcessResult& result) {
        self->current_.reset();
        const CheckSetSpec& spec = self->spec_;
        scoring::CheckResult r;
        r.command = command;
        r.exitCode = result.exitCode;
        r.signal = result.signal;
        r.timedOut = result.timedOut;
        r.error = result.spawnError;
        if (result.timedOut) r.error = "timed out after " + std::to_string(spec.config.timeoutPerCheckSeconds) + " s";
        if (result.cancelled) r.error = "cancelled";
        r.durationMs =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
        const std::string& text = tail->text;
        r.outputTruncated = text.size() > spec.recordedOutputBytes || tail->totalBytes > text.size();
        r.output = text.size() > spec.recordedOutputBytes ? text.substr(text.size() - spec.recordedOutputBytes) : text;
        if (step == Step::Tests) {
          std::optional<scoring::TestParse> parsed;
          if (spec.config.junitReport && !reachableWithoutSymlinks(spec.checkout, *spec.config.junitReport)) {
            spdlog::warn("not reading the JUnit report in {}: {} goes through a symlink", spec.checkout.string(),
                         *spec.config.junitReport);
          } else if (spec.config.junitReport) {
            std::string why;
            parsed = scoring::parseJUnitReport(spec.checkout / *spec.config.junitReport, &why);
            if (!parsed) spdlog::info("no JUnit report in {}: {}", spec.checkout.string(), why);
          } else {
            parsed = scoring::parseTestOutput(text, spec.config.testFormat);
          }
          if (parsed) {
            r.tests = parsed->counts;
            r.testCases = std::move(parsed->tests);
            r.testsReadByCase.assign(parsed->readByCase.begin(), parsed->readByCase.end());
            r.format = parsed->format;
          }
        } else if (step == Step::Lint) {
          if (auto parsed = scoring::parseLintOutput(text, spec.config.lintFormat)) {
            r.lint = parsed->counts;
            r.format = parsed->format;
          }
        }
        if (step == Step::Build || step == Step::Lint) r.findings = findingsIn(text, spec.checkout);
        self->finished(step, std::move(r));
      },
      JobLabel{spec_.raceId, spec_.subject, check});
}

std::vector<scoring::Finding> CheckSetRun::findingsIn(const std::string& output, const fs::path& checkout) {
  std::vector<scoring::Finding> findings = scoring::parseFindings(output);
  // A tool names files relative to where it ran (the checkout) or absolutely:
  // one inside the checkout is named relative to it, as the editors expect.
  for (auto& f : findings) {
    fs::path p(f.path);
    if (!p.is_absolute()) continue;
    fs::path relative = p.lexically_normal().lexically_relative(checkout);
    if (!relative.empty() && *relative.begin() != "..") f.path = relative.generic_string();
  }
  return findings;
}

void CheckSetRun::finished(Step step, scoring::CheckResult result) {
  switch (step) {
    case Step::Build: results_.build = std::move(result); break;
    case Step::Tests: results_.tests = std::move(result); break;
    case Step::Lint: results_.lint = std::move(result); break;
    case Step::Done: break;
  }
  next(static_cast<Step>(static_cast<int>(step) + 1));
}

}  // namespace hydra::core
