#include "core/process/line_splitter.h"

#include <algorithm>
#include <stdexcept>

namespace hydra::core {

namespace {

bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

LineSplitter::LineSplitter(std::size_t maxLine) : maxLine_(maxLine) {
  // Below 4 a piece could not hold a whole UTF-8 sequence.
  if (maxLine_ < 4) throw std::invalid_argument("LineSplitter: maxLine must be at least 4");
}

std::vector<std::string> LineSplitter::feed(std::string_view bytes) {
  std::vector<std::string> out;
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    appendContent(bytes.substr(0, newline), out);
    if (newline == std::string_view::npos) break;
    emitLine(out);
    bytes.remove_prefix(newline + 1);
  }
  return out;
}

std::vector<std::string> LineSplitter::finish() {
  std::vector<std::string> out;
  // A '\r' held back at the very end stays: without its '\n' it is content.
  while (pending_.size() > maxLine_) emitPiece(out);
  if (!pending_.empty()) out.push_back(std::move(pending_));
  pending_.clear();
  return out;
}

void LineSplitter::appendContent(std::string_view content, std::vector<std::string>& out) {
  while (!content.empty()) {
    // More content follows what we hold, so a full buffer is certainly more
    // than one piece long, even if it ends in '\r'.
    if (pending_.size() > maxLine_) emitPiece(out);
    const std::size_t room = maxLine_ + 1 - pending_.size();
    const std::size_t take = std::min(room, content.size());
    pending_.append(content.substr(0, take));
    content.remove_prefix(take);
  }
  // A full buffer whose extra byte is not '\r' cannot end in a terminator.
  if (pending_.size() > maxLine_ && pending_.back() != '\r') emitPiece(out);
}

void LineSplitter::emitPiece(std::vector<std::string>& out) {
  std::size_t cut = maxLine_;
  // Back up to the start of a UTF-8 sequence (at most 3 bytes) so that the
  // piece boundary does not turn a valid character into two replacements.
  while (cut > maxLine_ - 3 && isContinuationByte(pending_[cut])) --cut;
  if (isContinuationByte(pending_[cut])) cut = maxLine_;  // not UTF-8 anyway
  out.emplace_back(pending_, 0, cut);
  pending_.erase(0, cut);
}

void LineSplitter::emitLine(std::vector<std::string>& out) {
  if (!pending_.empty() && pending_.back() == '\r') pending_.pop_back();
  while (pending_.size() > maxLine_) emitPiece(out);
  out.push_back(std::move(pending_));
  pending_.clear();
}

}  // namespace hydra::core
