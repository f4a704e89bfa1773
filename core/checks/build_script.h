#pragma once

// Build scripts: the files that define what the build command does. An agent
// that edits them can make the build "pass" without building: the Makefile's
// target becomes `@true`, build.sh `exit 0`, package.json's scripts.build
// `echo ok`, or CMakeLists.txt drops the target whose compile breaks. So when
// an agent changed one of them, its build also runs with the base's versions
// put back over its tree, and a build that passes only with its own versions
// is scored as failed unless its change follows a file it added or removed
// (docs/scoring.md, Build scripts).
//
// What ties a command to files: the tool it runs (make reads Makefile,
// GNUmakefile, makefile and *.mk; cmake CMakeLists.txt and *.cmake; npm, yarn
// and pnpm package.json; cargo Cargo.toml, build.rs and .cargo/config; go
// go.mod and go.work; ninja *.ninja; meson meson.build), and the file it
// names as what to run: a program given by its path (`./build.sh`,
// `scripts/build.sh`), the script an interpreter runs (`bash build.sh`,
// `python3 tools/build.py`), and make's `-f FILE`, from the folder a `cd` on
// the line moved to. A package manager's script (`npm run build`, `yarn
// build`) is followed into what the base's package.json has it run, the same
// way (`node check.js` ties it to check.js too). A command hydra cannot tie
// to files this way (`gcc -o calc calc.c`, `python3 -m build`) has no build
// script: only the protected paths guard it.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge/diff.h"

namespace hydra::core::checks {

// Reads a file of the base commit by its path from the repository's root
// ("sub/package.json"); nullopt when the base has no such file.
using BaseFileReader = std::function<std::optional<std::string>(const std::string& path)>;

// The build scripts of `command` (a shell command line, as [scoring]
// build_command holds it) as protected-path globs (protected_paths.h); empty
// when hydra cannot tie the command to files. Each simple command of the line
// (split at `&&`, `||`, `;`, `|` and newlines) counts; quotes are taken off
// words, and a leading VAR=value, env, time, exec, nice or command is skipped.
// A `cd DIR` (or pushd) moves where the files it names after it are, until the
// subshell it is in ends; after a `cd` hydra cannot follow (home, `-`, a
// variable, out of the repository) it names none. The package.json scripts a
// command runs (and their pre- and post-scripts, and the scripts they run in
// turn) are read with `readBase`; without one they are not followed.
std::vector<std::string> buildScriptPatterns(std::string_view command, const BaseFileReader& readBase = {});
// The same, reading package.json from `baseCommit` of the repository at `repo`.
// Throws on a git error.
std::vector<std::string> buildScriptPatterns(std::string_view command, const std::filesystem::path& repo,
                                             const std::string& baseCommit);

// The files an agent's changes and the base's build scripts fail to agree on,
// read from git: the paths it added or removed (outside the build scripts
// themselves) that its versions of `scripts` name and the base's do not
// (a new source listed in the Makefile), or that the base's name and its do
// not (a deleted source taken out of it). A name counts as a whole word: its
// path or its file name, not inside a longer name. Sorted. Throws on a git error.
std::vector<std::string> filesTheScriptChangeFollows(const std::filesystem::path& repo, const std::string& baseCommit,
                                                     const std::string& commit,
                                                     const std::vector<merge::FileChange>& changes,
                                                     const std::vector<std::string>& scripts);

}  // namespace hydra::core::checks
