#include "core/adapter/event.h"

namespace hydra::core {

const char* toString(EventKind kind) {
  switch (kind) {
    case EventKind::Text:
      return "text";
    case EventKind::ToolCall:
      return "tool_call";
    case EventKind::ToolResult:
      return "tool_result";
    case EventKind::FileChange:
      return "file_change";
    case EventKind::Usage:
      return "usage";
    case EventKind::Error:
      return "error";
    case EventKind::Summary:
      return "summary";
    case EventKind::Raw:
      return "raw";
  }
  return "raw";
}

}  // namespace hydra::core
