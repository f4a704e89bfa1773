#pragma once

// Text that came from an agent (its output, the names of the files it wrote,
// its commit message, its review), made safe to show on a terminal. An
// agent that prints a control sequence would otherwise drive the user's
// terminal through hydra: write the clipboard (OSC 52), retitle the window
// (OSC 0), plant links (OSC 8), move the cursor and rewrite what hydra drew
// (CSI), or talk to the terminal in DCS, APC, PM or SOS strings.
//
// Every such sequence starts with ESC or a C1 control, so escaping those
// (and the other controls) visibly defuses all of them, and the user still
// sees what the agent sent:
//   - ESC and the other C0 controls but \n and \t in caret notation: ESC is
//     "^[", BEL "^G", CR "^M", NUL "^@"; DEL is "^?";
//   - the C1 controls U+0080..U+009F (as UTF-8) as "\u009b";
//   - a byte that is not part of valid UTF-8 as "\x9b" (a terminal in an
//     8-bit mode would take a lone 0x9b for CSI).
// Valid UTF-8 text is kept as it is, and the result is valid UTF-8.
// Colours hydra adds itself go around the safe text, never through this.

#include <string>
#include <string_view>

namespace hydra::core {

std::string terminalSafe(std::string_view text);

// For text that arrives in pieces (a log read page by page): a UTF-8
// character cut at the end of `text` waits in `pending` for the next piece
// instead of showing as bytes. Pass the same `pending` each time; an empty
// `text` flushes what waits.
std::string terminalSafe(std::string_view text, std::string& pending);

}  // namespace hydra::core
