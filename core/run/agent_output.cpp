#include "core/run/agent_output.h"

#include "core/util/utf8.h"

namespace hydra::core {

namespace {

void addUsage(Usage& total, const Usage& part) {
  auto add = [](auto& into, const auto& from) {
    if (from) into = into.value_or(0) + *from;
  };
  add(total.inputTokens, part.inputTokens);
  add(total.outputTokens, part.outputTokens);
  add(total.cachedInputTokens, part.cachedInputTokens);
  add(total.costUsd, part.costUsd);
}

}  // namespace

std::string lastNonEmpty(const std::deque<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->find_first_not_of(" \t\r") != std::string::npos) return *it;
  }
  return {};
}

std::string joinLines(const std::deque<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += '\n';
    out += l;
  }
  return out;
}

AgentOutputReader::AgentOutputReader(std::shared_ptr<const Redactor> redactor, const Adapter& adapter)
    : redactor_(std::move(redactor)), adapter_(adapter) {}

AgentSession* AgentOutputReader::open(const SessionSetup& setup) {
  if (auto session = adapter_.session(setup)) {
    AgentSession* raw = session.get();
    parser_ = std::move(session);
    return raw;
  }
  parser_ = adapter_.parser();
  return nullptr;
}

std::string AgentOutputReader::redact(OutputStream stream, std::string_view line) {
  return redactor_->redactLine(line, stream == OutputStream::Stdout ? stdoutState_ : stderrState_);
}

AgentOutputReader::Line AgentOutputReader::read(OutputStream stream, std::string_view line) {
  // Secrets never leave here unmasked: not to a subscriber, not to the disk.
  Line out{redact(stream, line), {}};
  if (stream == OutputStream::Stdout) {
    if (parser_) out.events = parser_->parseLine(out.text);
    if (adapter_.finalMessageIsOutput()) keepOutputTail(out.text);
  } else {
    keepStderrTail(out.text);
  }
  for (const auto& e : out.events) note(e);
  return out;
}

std::vector<AgentEvent> AgentOutputReader::finish(const std::optional<std::string>& cutOff) {
  if (!parser_) return {};
  auto tail = parser_->finish();
  // A stream hydra cut off ended in error, whatever the adapter could make of what came before.
  if (cutOff) {
    for (auto& e : tail) {
      if (e.kind != EventKind::Summary) continue;
      e.isError = true;
      e.warnings.push_back(*cutOff);
    }
  }
  for (const auto& e : tail) note(e);
  return tail;
}

void AgentOutputReader::fillIn(AgentFinished& finished) const {
  if (summaryUsage_) {
    finished.usage = summaryUsage_;
  } else if (sawUsage_) {
    finished.usage = usage_;
  }
  finished.warnings = warnings_;
  finished.stderrTail = joinLines(stderrTail_);
  finished.deniedToolCalls = deniedToolCalls_;
  finished.finalMessage = finalMessage_;
  if (finished.finalMessage.empty() && !outputTail_.empty()) {
    std::size_t a = outputTail_.find_first_not_of(" \t\r\n");
    if (a != std::string::npos) {
      finished.finalMessage = makeValidUtf8(outputTail_.substr(a, outputTail_.find_last_not_of(" \t\r\n") - a + 1));
    }
  }
  if (!sessionId_.empty()) finished.sessionId = sessionId_;
}

std::string AgentOutputReader::reason() const {
  // In the order a person would look.
  if (!lastError_.empty()) return lastError_;
  if (summaryIsError_) {
    if (!warnings_.empty()) return warnings_.back();
    if (!finalMessage_.empty()) return finalMessage_;
  }
  return lastNonEmpty(stderrTail_);
}

void AgentOutputReader::close() { parser_.reset(); }

void AgentOutputReader::note(const AgentEvent& e) {
  if (e.kind == EventKind::Usage && e.usage) {
    sawUsage_ = true;
    addUsage(usage_, *e.usage);
  } else if (e.kind == EventKind::Error && !e.text.empty()) {
    lastError_ = e.text;
  } else if (e.kind == EventKind::Summary) {
    if (e.usage) summaryUsage_ = e.usage;
    if (!e.text.empty()) finalMessage_ = e.text;
    if (!e.sessionId.empty()) sessionId_ = e.sessionId;
    summaryIsError_ = summaryIsError_ || e.isError;
    deniedToolCalls_ += e.deniedToolCalls;
    warnings_.insert(warnings_.end(), e.warnings.begin(), e.warnings.end());
  }
}

void AgentOutputReader::keepOutputTail(std::string_view line) {
  outputTail_.append(line);
  outputTail_ += '\n';
  if (outputTail_.size() <= kMaxOutputTail) return;
  // Whole lines only, so the text never starts inside a character.
  std::size_t cut = outputTail_.find('\n', outputTail_.size() - kMaxOutputTail);
  outputTail_.erase(0, cut == std::string::npos ? outputTail_.size() : cut + 1);
}

void AgentOutputReader::keepStderrTail(std::string line) {
  stderrTailBytes_ += line.size();
  stderrTail_.push_back(std::move(line));
  while (stderrTail_.size() > kStderrTailLines || (stderrTailBytes_ > kStderrTailBytes && stderrTail_.size() > 1)) {
    stderrTailBytes_ -= stderrTail_.front().size();
    stderrTail_.pop_front();
  }
}

}  // namespace hydra::core
