#include "core/executor/command.h"

#include <memory>

#include "core/process/process.h"

namespace hydra::core {

std::string CommandOutput::failure() const {
  if (!result.spawnError.empty()) return result.spawnError;
  if (result.timedOut) return "did not answer in time";
  std::string said = err.empty() ? out : err;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (auto nl = said.rfind('\n'); nl != std::string::npos) said = said.substr(nl + 1);
  std::string how = result.exitCode ? "exit code " + std::to_string(*result.exitCode)
                                    : "signal " + std::to_string(result.signal.value_or(0));
  return said.empty() ? how : said + " (" + how + ")";
}

void runCommand(boost::asio::io_context& io, const std::string& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env, std::chrono::milliseconds timeout,
                std::function<void(CommandOutput)> done) {
  ProcessSpec spec;
  spec.program = program;
  spec.args = args;
  spec.env = env;
  spec.timeout = timeout;
  spec.killGrace = std::chrono::seconds(2);
  auto output = std::make_shared<CommandOutput>();
  Process::start(
      io, std::move(spec),
      [output](OutputStream stream, std::string line) {
        std::string& into = stream == OutputStream::Stdout ? output->out : output->err;
        into += line;
        into += '\n';
      },
      [output, done = std::move(done)](const ProcessResult& result) {
        output->result = result;
        done(std::move(*output));
      });
}

CommandOutput runCommandSync(const std::string& program, const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env, std::chrono::milliseconds timeout) {
  boost::asio::io_context io;
  CommandOutput output;
  output.result.spawnError = "it did not finish";
  runCommand(io, program, args, env, timeout, [&output](CommandOutput o) { output = std::move(o); });
  io.run();
  return output;
}

}  // namespace hydra::core
