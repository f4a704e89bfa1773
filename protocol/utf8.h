#pragma once

// Agents print whatever bytes they like; editors and JSON need valid UTF-8.
// The one validator: protocol/ writes only valid JSON text with it, and core/
// (core/util/utf8.h) keeps agents' output valid with it.

#include <string>
#include <string_view>

namespace hydra::protocol {

// True when `bytes` is well-formed UTF-8 (Unicode table 3-7: no overlongs, no
// surrogates, nothing above U+10FFFF, no truncated sequences).
bool isValidUtf8(std::string_view bytes);

// `bytes` with every ill-formed sequence replaced by U+FFFD. Each maximal
// subpart of an ill-formed sequence becomes one U+FFFD, the practice Unicode
// recommends (chapter 3, "U+FFFD Substitution of Maximal Subparts"), so
// "\xE2\x82" + "A" gives U+FFFD + "A" and a lone "\xFF" gives one U+FFFD.
std::string makeValidUtf8(std::string_view bytes);

}  // namespace hydra::protocol
