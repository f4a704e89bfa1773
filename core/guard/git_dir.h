#pragma once

// The shared git directory's settings during a race. An unconfined agent can
// write `.git/config` (core.fsmonitor, core.hooksPath, a filter driver),
// `.git/hooks/`, `.git/info/` (attributes that name such a filter) or
// `.git/objects/info/` (alternates): the user's next `git status` or `git
// commit` would run its code outside any sandbox. hydra takes a snapshot of
// them when a race's worktrees exist and compares after each agent, as it
// does with the refs (core/guard/refs.h), and puts back what changed.
//
// What is watched, under the common git directory: `config`, every file
// under `hooks/` and `info/`, and `objects/info/alternates` and
// `http-alternates` (each with its content up to kMaxKept bytes and its
// permission bits). Not watched: `info/refs` (git's repack, and so a
// background `git gc --auto`, rewrites it; only dumb HTTP reads it), the refs
// (their own guard), `packed-refs`
// (which git rewrites whenever a packed ref is deleted; the refs it holds are
// compared by the ref guard), the rest of `objects/info/` (git's own
// maintenance writes it), and the worktrees' own metadata (`worktrees/NAME`).
//
// The objects are watched apart (snapshotBaseObjects), confined or not: an
// agent must be able to add objects, so `objects/` stays writable, and an
// existing loose object can be replaced there. Those the base commit needs
// (the commit, its trees and blobs) are kept, compared after each agent and
// put back; a base overwritten there would corrupt the repository and make
// an honest sibling's diff wrong. A loose object added where the base has
// a packed one is removed the same way.
//
// Packs cannot be kept (they hold the whole history), so they are watched by
// what the kernel says of each file (inode, size, change time: no process
// can set a change time back). Only when a pack or its index was added,
// replaced, written or removed are the base commit's objects checked, each
// read again and its id verified against its content, from the packs that
// changed (added or written) or in the whole store (removed): git's own
// repack, gc and freshening pass that check, a pack written through does
// not. What it damaged cannot be put back, so it is told as such (and a
// merge of the race then needs force). Objects over kMaxVerified bytes are
// not read again (memory stays bounded); a damaged one of those goes unseen.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hydra::core::guard {

// A file larger than this is compared by size and digest and cannot be put back.
inline constexpr std::size_t kMaxKept = 1 << 20;

struct GitDirFile {
  std::string content;  // empty and `tooLarge` past kMaxKept
  std::uint64_t digest = 0;
  unsigned mode = 0;  // its permission bits
  bool tooLarge = false;
  bool operator==(const GitDirFile&) const = default;
};

// What the kernel says of a pack file: enough to tell it was touched.
struct PackFile {
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t changedSec = 0;   // st_ctim
  std::int64_t changedNsec = 0;
  bool operator==(const PackFile&) const = default;
};

struct GitDirSnapshot {
  std::filesystem::path commonDir;
  std::map<std::string, GitDirFile> files;  // by path relative to commonDir ("hooks/pre-commit")
  bool settings = true;               // the watched settings above are in `files`
  std::vector<std::string> objects;   // the base's objects watched, "objects/ab/cdef..." (loose or not)
  std::map<std::string, PackFile> packs;  // "objects/pack/pack-....pack" and ".idx", with the objects
  std::set<std::string> toldDamaged;       // base objects told damaged or gone: each is told once
};

// A base object larger than this is not read again to verify it.
inline constexpr std::size_t kMaxVerified = 16u << 20;

// Beyond this many bytes of loose objects kept, the rest are compared by
// digest only and cannot be put back: a base of many loose objects must not
// take a race's memory.
inline constexpr std::size_t kMaxObjectsKept = 64u << 20;

// Reads the watched files of the git directory `commonDir`. Links are not
// followed: a link there counts as a file whose content is its target.
GitDirSnapshot snapshotGitDir(const std::filesystem::path& commonDir);

// The loose objects under `commonDir` that commit `baseCommit` of
// `repository` needs (itself, its trees, its blobs), each with its content
// (compressed, as git stores it), and the object store's packs. Throws
// git::GitError when the commit cannot be read.
GitDirSnapshot snapshotBaseObjects(const std::filesystem::path& repository, const std::string& baseCommit);

// What differs, for people, each put back when it could be: ".git/config
// changed (put back)", ".git/hooks/pre-commit added (removed)". `before`
// becomes the state now, so each change is told once.
std::vector<std::string> restoreGitDir(GitDirSnapshot& before);

}  // namespace hydra::core::guard
