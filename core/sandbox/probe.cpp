#include "core/sandbox/probe.h"

#include <stdlib.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/process/process.h"
#include "core/sandbox/bubblewrap.h"
#include "core/sandbox/mode.h"

namespace hydra::core::sandbox {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The probe's scratch directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "hydra-sandbox-probe-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw SandboxError("cannot create a directory for the sandbox probe in " +
                         fs::temp_directory_path().string());
    }
    path_ = fs::canonical(pattern);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

bool mentions(std::string text, std::string_view word) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find(word) != std::string::npos;
}

// The probe proper, once bwrap has been found.
SandboxProbe runProbe(SandboxProbe probe) {
  const ScratchDir scratch;
  const fs::path writable = scratch.path() / "writable";
  const fs::path readOnly = scratch.path() / "read-only";
  fs::create_directories(writable);
  fs::create_directories(readOnly);
  std::ofstream(readOnly / "file") << "original";

  SandboxPolicy policy;
  policy.worktree = writable;
  policy.repository = readOnly;
  ProcessSpec spec;
  spec.program = "/bin/sh";
  // Exit 3 if the read-only directory takes a write.
  spec.args = {"-c",
               "echo ok > probe || exit 2; if (echo changed > \"$1\") 2>/dev/null; then exit 3; fi",
               "sh", (readOnly / "file").string()};
  spec.timeout = 30s;
  ProcessSpec confined;
  try {
    confined = confine(spec, policy, probe.bwrap);
  } catch (const SandboxError& e) {
    probe.outcome = ProbeOutcome::Failed;
    probe.detail = e.what();
    return probe;
  }

  boost::asio::io_context io;
  std::string errors;
  std::optional<ProcessResult> result;
  auto process = Process::start(
      io, confined,
      [&](OutputStream stream, std::string line) {
        if (stream == OutputStream::Stderr) errors += (errors.empty() ? "" : "; ") + line;
      },
      [&](const ProcessResult& r) { result = r; });
  io.run();

  if (!result || !result->spawnError.empty()) {
    probe.outcome = ProbeOutcome::Failed;
    probe.detail = result ? result->spawnError : "the probe did not finish";
  } else if (result->exitCode == 0 && readAll(writable / "probe") == "ok\n" &&
             readAll(readOnly / "file") == "original") {
    probe.outcome = ProbeOutcome::Works;
  } else if (result->exitCode == 3 || readAll(readOnly / "file") != "original") {
    probe.outcome = ProbeOutcome::Failed;
    probe.detail = "a read-only directory took a write inside the sandbox";
  } else {
    const std::string status = result->exitCode
                                   ? "exit code " + std::to_string(*result->exitCode)
                                   : "signal " + std::to_string(result->signal.value_or(0));
    probe.detail = errors.empty() ? status : errors + " (" + status + ")";
    probe.outcome = mentions(errors, "namespace") || mentions(errors, "uid map")
                        ? ProbeOutcome::NamespacesRefused
                        : ProbeOutcome::Failed;
  }
  return probe;
}

}  // namespace

std::string SandboxProbe::describe() const {
  switch (outcome) {
    case ProbeOutcome::Works:
      return "bubblewrap works (" + bwrap.string() + ")";
    case ProbeOutcome::NotInstalled:
      return "bubblewrap is not installed (" + detail + "; install the Debian package bubblewrap)";
    case ProbeOutcome::NamespacesRefused:
      return "bubblewrap cannot create its namespaces here (" + detail + ")";
    case ProbeOutcome::Failed:
      break;
  }
  return "bubblewrap does not work here (" + detail + ")";
}

SandboxProbe probeBubblewrap(const std::string& program) {
  SandboxProbe probe;
  const char* pathEnv = std::getenv("PATH");
  const std::string searchPath = pathEnv != nullptr ? pathEnv : "/usr/bin:/bin";
  const auto found = findExecutable(program, searchPath);
  if (!found) {
    probe.outcome = ProbeOutcome::NotInstalled;
    probe.detail = program.find('/') != std::string::npos
                       ? "'" + program + "' is not an executable file"
                       : "'" + program + "' not found on PATH \"" + searchPath + "\"";
    return probe;
  }
  probe.bwrap = fs::absolute(*found);
  try {
    return runProbe(std::move(probe));
  } catch (const std::exception& e) {
    // The scratch directory could not be made or written: say so rather than
    // guess about the sandbox.
    SandboxProbe failed;
    failed.bwrap = fs::absolute(*found);
    failed.outcome = ProbeOutcome::Failed;
    failed.detail = e.what();
    return failed;
  }
}

const SandboxProbe& cachedSandboxProbe() {
  static const SandboxProbe probe = probeBubblewrap();
  return probe;
}

}  // namespace hydra::core::sandbox
