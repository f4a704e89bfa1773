#pragma once

// An agent's output as it arrives, line by line: secrets masked, stdout read
// by its adapter's parser (or its ACP session), and what the lines said kept
// for the run's AgentFinished: usage, the final message, the CLI's session id,
// its warnings and errors, the end of its stderr (and, for a CLI that prints
// plain text, the end of its stdout). No process, no events: the run hands
// the lines in and publishes what comes back.
//
// One thread (the run's io thread).

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/adapter.h"
#include "core/events/events.h"
#include "core/util/redact.h"

namespace hydra::core {

class AgentOutputReader {
 public:
  // How much of its stderr the record keeps: the end, where CLIs say why they stopped.
  static constexpr std::size_t kStderrTailLines = 20;
  static constexpr std::size_t kStderrTailBytes = 4096;
  // Adapter::finalMessageIsOutput(): how much of the end of its stdout is kept.
  static constexpr std::size_t kMaxOutputTail = 16 * 1024;

  AgentOutputReader(std::shared_ptr<const Redactor> redactor, const Adapter& adapter);

  // Before the agent starts: its adapter's session when it is spoken to over
  // stdio (returned; it lives as long as the reader, until close()), else
  // its parser (nullptr returned).
  AgentSession* open(const SessionSetup& setup);

  // `line` with its secrets masked; a private key block begun on a stream
  // stays masked across that stream's lines (its setup_command's too).
  std::string redact(OutputStream stream, std::string_view line);

  struct Line {
    std::string text;                // redacted
    std::vector<AgentEvent> events;  // what the parser made of it (stdout only)
  };
  // One line of the agent's: redacted, then stdout through the parser and
  // stderr into its tail; what its events say is noted.
  Line read(OutputStream stream, std::string_view line);

  // The stream ended: what the parser held back, noted. `cutOff` (hydra
  // ended it: a timeout, a cancel, a limit) makes any summary among it an
  // error, with that as its warning.
  std::vector<AgentEvent> finish(const std::optional<std::string>& cutOff);

  // What the output said, into `finished`: usage (its summary's, else the sum
  // of its usage events), warnings, stderr tail, denied tool calls, final
  // message (the end of its stdout when its adapter says so and it gave
  // none) and session id.
  void fillIn(AgentFinished& finished) const;
  // Why the CLI says it failed, in its own words: the error it reported in
  // its stream, what its error summary said, then its last word on stderr;
  // empty when it said nothing.
  std::string reason() const;
  // Its summary said it failed.
  bool summaryIsError() const { return summaryIsError_; }

  // The parser (and session) go; the lines read so far stay.
  void close();

 private:
  void note(const AgentEvent& event);
  void keepOutputTail(std::string_view line);
  void keepStderrTail(std::string line);

  std::shared_ptr<const Redactor> redactor_;
  const Adapter& adapter_;
  std::unique_ptr<StreamParser> parser_;
  Redactor::LineState stdoutState_;
  Redactor::LineState stderrState_;

  Usage usage_;
  bool sawUsage_ = false;
  std::optional<Usage> summaryUsage_;
  std::vector<std::string> warnings_;
  std::string finalMessage_;
  std::string sessionId_;  // the CLI's session, from its summary
  std::string outputTail_;
  bool summaryIsError_ = false;
  int deniedToolCalls_ = 0;
  std::string lastError_;  // the text of the last error event
  std::deque<std::string> stderrTail_;
  std::size_t stderrTailBytes_ = 0;
};

// The last line of `lines` that is not blank; empty when there is none.
std::string lastNonEmpty(const std::deque<std::string>& lines);
// `lines` joined with '\n'.
std::string joinLines(const std::deque<std::string>& lines);

}  // namespace hydra::core
