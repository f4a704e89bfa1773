#include "core/executor/job_files.h"

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/util/atomic_file.h"
#include "core/util/json_fields.h"

namespace hydra::core::job {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::int64_t millisSinceEpoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point fromMillis(std::int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

json::object parseObject(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) throw std::runtime_error(std::string(what) + " is not valid JSON: " + ec.message());
  if (!v.is_object()) throw std::runtime_error(std::string(what) + " is not a JSON object");
  return std::move(v.as_object());
}

// Single quotes for sh: nothing inside is special but the quote itself.
std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string toJson(const JobSpec& spec) {
  json::object o;
  o["program"] = spec.program;
  o["args"] = stringArray(spec.args);
  o["cwd"] = spec.cwd.string();
  json::object env;
  for (const auto& [k, v] : spec.env) env[k] = v;
  o["env"] = std::move(env);
  o["unsetEnv"] = stringArray(spec.unsetEnv);
  o["killGraceMs"] = spec.killGrace.count();
  return json::serialize(o);
}

JobSpec parseJobSpec(std::string_view text) {
  json::value v = parseObject(text, "the job's spec");
  JsonFields f(v);
  JobSpec spec;
  spec.program = f.string("program");
  spec.args = f.strings("args");
  spec.cwd = f.string("cwd");
  if (const json::value* env = f.find("env")) {
    if (!env->is_object()) f.fail("env", "expected an object");
    for (const auto& [k, value] : env->as_object()) {
      if (!value.is_string()) f.fail("env", "expected string values");
      spec.env[std::string(k)] = std::string(value.as_string());
    }
  }
  spec.unsetEnv = f.strings("unsetEnv");
  spec.killGrace = std::chrono::milliseconds(f.optionalNumber<std::int64_t>("killGraceMs").value_or(2000));
  return spec;
}

std::string toJson(const JobResult& result) {
  const ProcessResult& p = result.process;
  json::object o;
  putIfSet(o, "exitCode", p.exitCode);
  putIfSet(o, "signal", p.signal);
  o["cancelled"] = p.cancelled;
  putIfNotEmpty(o, "spawnError", p.spawnError);
  o["startedAtMs"] = millisSinceEpoch(p.startedAt);
  o["endedAtMs"] = millisSinceEpoch(p.endedAt);
  o["leftRunningEnded"] = p.leftRunningEnded;
  o["host"] = result.host;
  return json::serialize(o);
}

JobResult parseJobResult(std::string_view text) {
  json::value v = parseObject(text, "the job's result");
  JsonFields f(v);
  JobResult r;
  r.process.exitCode = f.optionalNumber<int>("exitCode");
  r.process.signal = f.optionalNumber<int>("signal");
  r.process.cancelled = f.boolean("cancelled", false);
  r.process.spawnError = f.optionalString("spawnError").value_or("");
  r.process.startedAt = fromMillis(f.optionalNumber<std::int64_t>("startedAtMs").value_or(0));
  r.process.endedAt = fromMillis(f.optionalNumber<std::int64_t>("endedAtMs").value_or(0));
  r.process.leftRunningEnded = f.optionalNumber<int>("leftRunningEnded").value_or(0);
  r.host = f.optionalString("host").value_or("");
  return r;
}

void writeJob(const fs::path& dir, const JobSpec& spec, const fs::path& runner) {
  // Created 0600 before anything is in it: the agent's variables never sit
  // readable by others, not even for a moment.
  const fs::path specPath = dir / kSpec;
  {
    std::ofstream touch(specPath, std::ios::binary | std::ios::trunc);
    if (!touch) throw std::runtime_error("cannot write " + specPath.string());
  }
  fs::permissions(specPath, fs::perms::owner_read | fs::perms::owner_write);
  writeFileAtomic(specPath, toJson(spec));
  const fs::path script = dir / kScript;
  writeFileAtomic(script, "#!/bin/sh\n# A hydra job: the runner starts the command in spec.json and reports back here.\nexec " +
                              shellQuote(runner.string()) + " run-job " + shellQuote(dir.string()) + "\n");
  fs::permissions(script, fs::perms::owner_all);
}

std::optional<JobResult> readResult(const fs::path& dir) {
  std::ifstream in(dir / kResult, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parseJobResult(text.str());
}

}  // namespace hydra::core::job
