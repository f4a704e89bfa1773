#pragma once

// The user's own checkout during a race. Unconfined, an agent can write into
// it, and so can the user: hydra cannot tell who did. It takes a snapshot at
// race start and reports what differs afterwards as a warning.
//
// What is compared: HEAD (where it points and the commit it resolves to), the
// index's entries (path, mode, staged blob, stage; not the cached stat data
// that a mere `git status` may refresh), and every file `git status` lists
// (modified, staged, deleted, untracked) with the content of its working
// copy. Ignored files are not looked at.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/guard/refs.h"

namespace hydra::core::guard {

struct CheckoutFile {
  unsigned status = 0;    // git_status_t flags
  std::string contentId;  // blob id of the working file; empty when it is absent

  bool operator==(const CheckoutFile&) const = default;
};

struct CheckoutSnapshot {
  RefTarget head;
  std::string headCommit;                     // hex; empty on an unborn branch
  std::string indexDigest;                    // over the index entries, see above
  std::map<std::string, CheckoutFile> files;  // by path relative to the working directory
};

// Reads the checkout of the repository at `repository` (its working
// directory). Writes nothing, not even the index. Throws GitError.
CheckoutSnapshot snapshotCheckout(const std::filesystem::path& repository);

struct CheckoutChange {
  enum class Kind { Head, Index, File };
  Kind kind = Kind::File;
  std::string path;    // for Kind::File
  std::string detail;  // for people: "HEAD moved from -> refs/heads/main to 3f2a9c1", ...

  bool operator==(const CheckoutChange&) const = default;
};

std::vector<CheckoutChange> compareCheckout(const CheckoutSnapshot& before,
                                            const CheckoutSnapshot& after);

}  // namespace hydra::core::guard
