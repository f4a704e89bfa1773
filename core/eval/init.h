#pragma once

// `hydra eval init`: a new eval set, as commented TOML. Without a race, a
// template to fill in; from a race, a case with the race's task and base
// commit whose hidden files are the test files the chosen agent (the winner)
// added or changed: the race's own proof of a fix becomes the check that a
// later agent's fix works, and no agent of the eval sees it.

#include <string>
#include <string_view>
#include <vector>

namespace hydra::core::eval {

struct SetHeader {
  std::string name;                 // [eval] name
  std::vector<std::string> agents;  // [eval] agents
};

// A case taken from a race.
struct RaceCase {
  std::string id;
  std::string task;
  std::string baseCommit;
  std::string verifyCommand;
  std::vector<std::string> hiddenFiles;  // relative to the set's folder, which holds copies
  std::string raceId;                    // where it came from, for the comment
  std::string agentId;
};

// A commented eval set with one case to fill in, verified by `verifyCommand`.
std::string templateSet(const SetHeader& header, const std::string& verifyCommand);

// The eval set of one case taken from a race.
std::string setFromRace(const SetHeader& header, const RaceCase& c);

// Whether a path looks like a test file, by the conventions of the common
// test runners: a component named test, tests, spec, specs or __tests__, or
// a file named test_*, *_test.*, *_spec.*, *.test.*, *.spec.*, *Test.* or
// *Tests.*.
bool isTestPath(std::string_view path);

// A name or case id made from free text: lower-case letters, digits and '-',
// at most `limit` characters, never empty ("case" when nothing is left).
std::string slugOf(std::string_view text, std::size_t limit = 40);

// `text` as a TOML basic string, quotes included.
std::string tomlString(std::string_view text);

}  // namespace hydra::core::eval
