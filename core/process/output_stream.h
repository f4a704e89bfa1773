#pragma once

#include <optional>
#include <string_view>

namespace hydra::core {

// Which of a child's output pipes a line came from.
enum class OutputStream { Stdout, Stderr };

inline std::string_view toString(OutputStream stream) {
  return stream == OutputStream::Stdout ? "stdout" : "stderr";
}

inline std::optional<OutputStream> parseOutputStream(std::string_view text) {
  if (text == "stdout") return OutputStream::Stdout;
  if (text == "stderr") return OutputStream::Stderr;
  return std::nullopt;
}

}  // namespace hydra::core
