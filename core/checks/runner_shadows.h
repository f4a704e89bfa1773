#pragma once

// Runner shadows: files an agent added that the test runner, its interpreter
// or its configuration would load in place of the runner the user configured,
// before the project's code. The judge must not be the defendant's: an agent
// that adds a pytest.py at the repository root has `python3 -m pytest` (which
// puts the working directory first on sys.path) run its own "pytest", which
// may print PASSED for every test.
//
// Python: a new module or package at the repository root (or a new package's
// files there) named like a module of the standard library or one installed
// for the system's Python (pytest, _pytest, iniconfig, pluggy, ...), and a new
// sitecustomize.py, usercustomize.py or *.pth anywhere. Node: anything the
// agent committed under a node_modules/ folder (where `npx jest` finds its jest).
// A name the base commit already has at its root is the project's own and
// never a shadow (a project may be installed on the system too).
//
// They are always protected: a runner shadow is a protected change whatever
// [scoring] protected_paths says, flagged, and under either protected_mode
// its checks run without it (a shadow is never the project's code, and
// checking with it would score the agent's runner, not its work).
//
// Why not PYTHONSAFEPATH: it does keep `python3 -m pytest` from importing
// the working directory's pytest.py or iniconfig.py, but it also drops the
// directory for the project's own imports (a repository with calc.py at the
// root and tests in tests/ fails to collect), so it would change what the
// user's command means.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/merge/diff.h"

namespace hydra::core::checks {

// The module names a new top-level file may not take: the runner's own
// (pytest and what it imports at start-up) and every module found in the
// system's Python folders (/usr/lib/python3*, their dist-packages and
// /usr/local's site- and dist-packages). Read once per process.
const std::set<std::string>& shadowableModules();

// The paths of `changes` (an agent's diff against the base) that are runner
// shadows, sorted and unique. `baseRootNames` are the names at the root of
// the base commit's tree; `shadowable` the names a new top-level module may
// not take (shadowableModules() outside tests).
std::vector<std::string> runnerShadows(const std::vector<merge::FileChange>& changes,
                                       const std::set<std::string>& baseRootNames,
                                       const std::set<std::string>& shadowable);

// The names at the root of `commit`'s tree in the repository at `repo`.
// Throws on a git error.
std::set<std::string> rootNames(const std::filesystem::path& repo, const std::string& commit);

}  // namespace hydra::core::checks
