#pragma once

// Whether a test command's output will name the tests it runs. Tests are
// compared by name only where both runs name every test they counted
// (docs/scoring.md, "Tests by name"); a runner that names none, or only its
// failures, leaves the comparison to the counts. `hydra init` and hydra.toml's
// diagnostics both warn from this one decision.

#include <optional>
#include <string>
#include <string_view>

namespace hydra::core::scoring {

// Why the tests `command` runs will be compared by counts only, as one
// sentence for a warning; nullopt when its output names them or hydra cannot
// tell (a `npm test` whose script it does not see). `format` is [scoring]
// test_format when set (else the runner is recognised from the command's
// words); `junitReport`: [scoring] junit_report is set, which names them.
std::optional<std::string> testsByCountsOnlyReason(std::string_view command, std::optional<std::string_view> format,
                                                   bool junitReport);

}  // namespace hydra::core::scoring
