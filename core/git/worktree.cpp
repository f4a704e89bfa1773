#include "core/git/worktree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

#include "core/git/checkout.h"
#include "core/git/result_size.h"
#include "core/git/git.h"
#include "core/git/index_file.h"
#include "core/util/atomic_file.h"
#include "core/util/file_lock.h"
#include "core/util/paths.h"
#include "core/util/read_file.h"
#include "core/util/safe_fs.h"

namespace hydra::core {

namespace fs = std::filesystem;
using git::check;
using git::GitError;

namespace {

constexpr std::string_view kBranchPrefix = "hydra/";
constexpr std::string_view kHeadsPrefix = "refs/heads/";
constexpr const char* kAuthorName = "hydra";
constexpr const char* kAuthorEmail = "hydra@localhost";

std::string inQuotes(std::string_view s) { return "'" + std::string(s) + "'"; }

bool isSafeId(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// Names end up in paths and ref names, so anything that could climb out of a
// directory or form an invalid ref is refused up front.
void requireSafeId(std::string_view what, const std::string& value) {
  if (!isSafeId(value)) {
    throw std::invalid_argument(std::string(what) + " " + inQuotes(value) +
                                " must be non-empty and contain only [A-Za-z0-9_-]");
  }
}

void requireRemovable(const Worktree& wt, bool deleteBranch) {
  requireSafeId("worktree name", wt.name);
  if (deleteBranch && !wt.branch.starts_with(kBranchPrefix)) {
    throw std::invalid_argument("refusing to delete branch " + inQuotes(wt.branch) +
                                ": hydra deletes only its own hydra/* branches");
  }
}

std::string refName(const std::string& branch) { return std::string(kHeadsPrefix) + branch; }

fs::path adminDir(const fs::path& commonDir, const std::string& name) {
  return commonDir / "worktrees" / name;
}

bool pathExists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

GitError osError(const std::string& what, const std::error_code& ec) {
  return GitError(GIT_ERROR, GIT_ERROR_OS, what + ": " + ec.message());
}

// A small file of git's or hydra's in a git directory or a worktree, which an
// unconfined agent may have replaced: "" when it is missing or not a regular
// file of at most 1 MiB (a FIFO there is never waited on, a link to a device
// never read), so that one such worktree reads as broken, not as a hang.
std::string readFile(const fs::path& p) {
  try {
    return readRegularFile(p, std::size_t{1} << 20);
  } catch (const std::exception&) {
    return {};
  }
}

// ---- metadata ---------------------------------------------------------------

struct Metadata {
  std::string agentId;
  std::string baseCommit;
  std::string branch;
  std::string pooled;  // a pooled worktree: the commit it holds
  std::uintmax_t bytes = 0;
  std::optional<ProcessOwner> owner;
};

// Writes `content` to `file` whole or not at all. A symbolic link an agent
// planted there (or under a temporary name) is replaced, never written
// through: see writeFileAtomic.
void writeWhole(const fs::path& file, const std::string& content) {
  try {
    writeFileAtomic(file, content);
  } catch (const std::system_error& e) {
    throw GitError(GIT_ERROR, GIT_ERROR_OS, e.what());
  }
}

std::string ownerLine(const std::optional<ProcessOwner>& owner) {
  return owner ? "owner " + toWord(*owner) + "\n" : std::string();
}

// Whole or not at all: a hydra killed while writing it leaves the old
// metadata (or none), never a file cut short.
void writeMetadata(const fs::path& admin, const Worktree& wt) {
  writeWhole(admin / kWorktreeRecordFile, "agent " + wt.agentId + "\nbase " + wt.baseCommit + "\nbranch " + wt.branch +
                                        "\n" + ownerLine(wt.owner));
}

std::optional<Metadata> readMetadata(const fs::path& admin) {
  const fs::path file = admin / kWorktreeRecordFile;
  if (!pathExists(file)) return std::nullopt;
  Metadata meta;
  std::istringstream in(readFile(file));
  std::string key, value;
  while (in >> key >> value) {
    if (key == "agent") meta.agentId = value;
    if (key == "base") meta.baseCommit = value;
    if (key == "branch") meta.branch = value;
    if (key == "pooled") meta.pooled = value;
    if (key == "bytes") meta.bytes = std::strtoull(value.c_str(), nullptr, 10);
    if (key == "owner") meta.owner = parseOwnerWord(value);
  }
  return meta;
}

// The branch a worktree's HEAD names, read from .git/worktrees/<name>/HEAD
// without resolving it: that also works when the working directory is gone.
std::optional<std::string> headBranch(const fs::path& admin) {
  std::string head = readFile(admin / "HEAD");
  constexpr std::string_view kRef = "ref: ";
  if (!head.starts_with(kRef)) return std::nullopt;  // detached
  head.erase(0, kRef.size());
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.pop_back();
  if (!head.starts_with(kHeadsPrefix)) return std::nullopt;
  return head.substr(kHeadsPrefix.size());
}

// ---- excludes ---------------------------------------------------------------

// Escapes the characters that are wildcards in gitignore patterns.
std::string ignorePatternFor(const fs::path& relativeDir) {
  std::string pattern = "/";
  for (char c : relativeDir.generic_string()) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') pattern += '\\';
    pattern += c;
  }
  if (pattern.back() != '/') pattern += '/';
  return pattern;
}

std::set<std::string> linesOf(const std::string& text) {
  std::set<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    lines.insert(line);
  }
  return lines;
}

// ---- the worktree registry ---------------------------------------------------

// libgit2 1.5 decides whether a branch is checked out (git_worktree_add,
// git_branch_is_checked_out) by visiting every worktree, and answers "yes" when it
// meets one that is half made or half removed: the failed lookup becomes 1
// through a misplaced parenthesis in git_repository_foreach_worktree. Two
// first git_worktree_add calls also race to create .git/worktrees. So, within
// this process, worktrees are registered and unregistered and branches
// deleted one at a time, under this mutex; the slow parts (checkouts, deleting
// directories) still run side by side.
std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}

// The same between processes: registryMutex() for this process's threads,
// then a lock file for the other hydras. It lives in the common git
// directory, next to the registry it guards (.git/worktrees, shared by every
// linked worktree and every workspace_dir of the repository), not in the
// workspace, whose listing is the worktrees. Held only for steps that are
// quick (metadata, renames, refs), never across a checkout or the removal of
// a directory tree.
class RegistryLock {
 public:
  explicit RegistryLock(const fs::path& commonDir)
      : local_(registryMutex()), shared_(commonDir / "hydra-worktrees.lock") {}

 private:
  std::lock_guard<std::mutex> local_;
  FileLock shared_;
};

// True when what `owner` made may be removed: its process is gone. Without
// an owner it was made before owners were recorded.
bool ownerIsDead(const std::optional<ProcessOwner>& owner) {
  return !owner || ownerLife(*owner) == OwnerLife::Dead;
}

// ---- removal ----------------------------------------------------------------

// Gives the owner write access to `root` and everything under it, so a tree
// that a tool made read-only can be deleted.
void makeOwnerWritable(const fs::path& root) {
  std::error_code ec;
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::add | fs::perm_options::nofollow,
                  ec);
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
  }
}

void removeTree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (!ec) return;
  makeOwnerWritable(p);
  fs::remove_all(p, ec);
  if (ec) throw osError("remove " + inQuotes(p.string()), ec);
}

// True when `p` lies strictly below `dir` (both made canonical first).
bool isBelow(const fs::path& dir, const fs::path& p) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return !ec && canonical != dir && isWithin(dir, canonical);
}

void requireUnlocked(git_repository* repo, const Worktree& wt) {
  git_worktree* raw = nullptr;
  if (git_worktree_lookup(&raw, repo, wt.name.c_str()) < 0) {
    git_error_clear();  // not registered: nothing to be locked
    return;
  }
  git::WorktreePtr handle(raw);
  git::Buf reason;
  const int locked = git_worktree_is_locked(&reason.value, handle.get());
  check(locked, "check whether worktree " + inQuotes(wt.name) + " is locked");
  if (locked > 0) {
    throw GitError(GIT_ELOCKED, GIT_ERROR_WORKTREE,
                   "worktree " + inQuotes(wt.name) + " is locked: " + reason.str());
  }
}

// Deletes the working directory when it lies inside the workspace. This comes
// before unregistering: a crash in between leaves a registered worktree
// without a directory, which list() and prune() still find.
void removeDirectory(const fs::path& workspaceDir, const Worktree& wt) {
  if (isBelow(workspaceDir, wt.path) && pathExists(wt.path)) removeTree(wt.path);
}

// ---- retiring registrations ------------------------------------------------

// Where a registration goes to be deleted: <common dir>/hydra-removing/
// <remover>-<random>. Deleting .git/worktrees/<name> in place, file by file,
// can be cut short by a kill, and what is left (HEAD, index, no gitdir, no
// hydra metadata) is neither git's to list nor recognisably hydra's to
// finish, and libgit2 takes a branch for checked out while it is there.
// One rename takes the whole entry out of .git/worktrees instead, and its
// name says which hydra deletes it, so that what a killed one left is
// finished by the next and a live one's is left alone.
constexpr std::string_view kRetiredDir = "hydra-removing";

// The hydra that a name "<prefix><owner>-<random>" (the owner as toWord()
// writes it) was made for; nullopt for any other name.
std::optional<ProcessOwner> ownerInName(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  return parseOwnerWord(name.substr(0, dash));
}

std::string randomHex(int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device random;
  std::string out;
  for (int i = 0; i < digits; ++i) out += kHex[random() % 16];
  return out;
}

// Takes `admin` (an entry of .git/worktrees) out of git's sight in one
// rename and deletes it. Call with the registry lock held.
void retireRegistration(const fs::path& commonDir, const fs::path& admin) {
  if (!pathExists(admin)) return;
  const fs::path retired = commonDir / kRetiredDir;
  std::error_code ec;
  fs::create_directory(retired, ec);
  if (ec || !fs::is_directory(fs::symlink_status(retired, ec))) {
    throw osError("make " + inQuotes(retired.string()), ec ? ec : std::make_error_code(std::errc::not_a_directory));
  }
  const fs::path target = retired / (toWord(ProcessOwner::self()) + "-" + randomHex(12));
  fs::rename(admin, target, ec);
  if (ec) throw osError("unregister " + inQuotes(admin.string()), ec);
  removeTree(target);
  ::rmdir(retired.c_str());  // only when empty: another hydra may be retiring one now
}

// Deletes what hydras that died left being retired. Call with the registry
// lock held.
void finishRetirements(const fs::path& commonDir) {
  const fs::path retired = commonDir / kRetiredDir;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(retired, ec))) return;
  std::vector<fs::path> dead;
  for (fs::directory_iterator it(retired, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto remover = ownerInName(it->path().filename().string(), "");
    if (remover && !ownerIsDead(remover)) continue;
    dead.push_back(it->path());
  }
  for (const fs::path& p : dead) removeTree(p);
  ::rmdir(retired.c_str());
}

// Unregisters the worktree: its entry of .git/worktrees is retired whole,
// whatever state it is in. Its working directory is removeDirectory()'s,
// and only inside the workspace. Call with the registry lock held.
void unregister(const fs::path& commonDir, const Worktree& wt) {
  retireRegistration(commonDir, adminDir(commonDir, wt.name));
}

// Makes the checks git_branch_delete makes, then deletes the ref (and its
// reflog). git_branch_delete itself is avoided: it also drops the branch's
// config section, and in libgit2 1.5.1 that leaks a pcre2 match block for
// every config entry scanned (git_regexp_match returns before freeing it when
// nothing matches). hydra never configures its branches; an entry an agent
// added (`git push -u`) stays behind, harmlessly.
// Call with registryMutex() held.
// A branch hydra deletes with its worktree is named in this file of the
// common git directory from before the worktree is unregistered until the
// branch is gone, all under the registry lock: a hydra killed between the two
// leaves this file rather than a branch that nothing names, and prune()
// finishes the deletion. Found under the lock, its writer is dead.
constexpr std::string_view kBranchJournalPrefix = "hydra-delete-branch-";

fs::path branchJournal(const fs::path& commonDir, const std::string& worktreeName) {
  return commonDir / (std::string(kBranchJournalPrefix) + worktreeName);
}

void deleteBranchIfPresent(git_repository* repo, const std::string& branch);

// "hydra/name": segments of safe ids only, so that it names a file under refs/heads.
bool isSafeRefName(const std::string& branch) {
  std::size_t start = 0;
  while (start <= branch.size()) {
    const std::size_t end = std::min(branch.find('/', start), branch.size());
    if (!isSafeId(std::string_view(branch).substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

// Deletes the branches named by the journals a killed hydra left; call with
// the registry lock held. A branch that cannot go (checked out meanwhile) stays.
void finishBranchDeletions(git_repository* repo, const fs::path& commonDir) {
  std::error_code ec;
  std::vector<fs::path> journals;
  for (fs::directory_iterator it(commonDir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().starts_with(kBranchJournalPrefix)) journals.push_back(it->path());
  }
  for (const fs::path& journal : journals) {
    try {
      std::string branch = readRegularFile(journal, 4096);
      branch = branch.substr(0, branch.find('\n'));
      if (branch.starts_with(kBranchPrefix) && isSafeRefName(branch)) {
        deleteBranchIfPresent(repo, branch);  // past a lock the killed deletion left
      }
    } catch (const GitError&) {
      // Checked out, or taken for checked out while another half-removed
      // entry exists: the journal stays, and a later prune tries again.
      git_error_clear();
      continue;
    } catch (const std::exception&) {
      // Unreadable: nothing to finish.
    }
    std::error_code removed;
    fs::remove(journal, removed);
  }
}

// A branch hydra creates for a worktree exists before any registration
// names it (git_worktree_add needs the branch). The branches a creation makes
// are named, with their worktrees, in a journal of the common git directory
// named for the creating hydra, from before the first branch is made until
// every worktree is made (or undone): a hydra killed in between leaves this
// file rather than a branch that nothing names. What a dead creator left is
// finished under the registry lock: a branch whose worktree has a
// registration is that registration's to remove (as a half-made or dead
// one, by prune()); one without, or with only a half-taken pool entry, is
// deleted with the journal.
constexpr std::string_view kCreationJournalPrefix = "hydra-create-branches-";

fs::path writeCreationJournal(const fs::path& commonDir, const std::vector<Worktree>& plans,
                              const ProcessOwner& creator) {
  std::string lines;
  for (const Worktree& wt : plans) lines += wt.name + " " + wt.branch + "\n";
  const fs::path journal = commonDir / (std::string(kCreationJournalPrefix) + toWord(creator) + "-" + randomHex(12));
  writeWhole(journal, lines);
  return journal;
}

// Finishes the creations dead hydras left; call with the registry lock held.
// A branch that cannot go yet (a half-taken pool entry's HEAD still names
// it) keeps its journal for a later prune.
void finishBranchCreations(git_repository* repo, const fs::path& commonDir) {
  std::error_code ec;
  std::vector<fs::path> journals;
  for (fs::directory_iterator it(commonDir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(kCreationJournalPrefix) || isAtomicTempName(name)) continue;
    const auto creator = ownerInName(name, kCreationJournalPrefix);
    if (creator && !ownerIsDead(creator)) continue;  // still creating
    journals.push_back(it->path());
  }
  for (const fs::path& journal : journals) {
    std::string lines;
    try {
      lines = readRegularFile(journal, std::size_t{1} << 20);
    } catch (const std::exception&) {
      // Unreadable (or swapped for something else): nothing to finish.
    }
    bool unfinished = false;
    std::size_t start = 0;
    while (start < lines.size()) {
      const std::size_t end = std::min(lines.find('\n', start), lines.size());
      const std::string line = lines.substr(start, end - start);
      start = end + 1;
      const auto space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string worktree = line.substr(0, space);
      const std::string branch = line.substr(space + 1);
      if (!isSafeId(worktree) || !branch.starts_with(kBranchPrefix) || !isSafeRefName(branch)) continue;
      const fs::path admin = adminDir(commonDir, worktree);
      if (pathExists(admin)) {
        const auto meta = readMetadata(admin);
        if (!meta || meta->pooled.empty()) continue;  // its registration names it
      }
      try {
        deleteBranchIfPresent(repo, branch);
      } catch (const GitError&) {
        git_error_clear();
        unfinished = true;
      }
    }
    if (!unfinished) {
      std::error_code removed;
      fs::remove(journal, removed);
    }
  }
}

// Removes the empty directories under `commonDir`/worktrees: what a hydra
// killed while removing a registration's files left of it (git has nothing
// to open there). Call with the registry lock held: registrations are made
// under it, so none is half made now. rmdir() removes only an empty one.
void removeEmptyRegistrations(const fs::path& commonDir) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (fs::directory_iterator it(commonDir / "worktrees", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
  }
  for (const fs::path& dir : dirs) ::rmdir(dir.c_str());
}

void deleteBranchIfPresent(git_repository* repo, const std::string& branch) {
  if (branch.starts_with(kBranchPrefix) && isSafeRefName(branch)) {
    // A hydra killed while it wrote this branch (a result's commit, a
    // deletion) left the ref's lock. hydra deletes its branches only under
    // the registry lock, held here, and only of worktrees nobody runs in any
    // more, so nothing writes this branch now: the lock is stale.
    // Opened beneath refs/heads without following a link on the way.
    const fs::path lock = fs::path(branch + ".lock");
    try {
      SafeDir::openBeneath(git::commonDir(repo) / "refs" / "heads", lock.parent_path())
          .remove(lock.filename().string());
    } catch (const std::exception&) {
      // No such folder, or not hydra's own: no lock of hydra's to take away.
    }
  }
  git_reference* raw = nullptr;
  const int rc = git_branch_lookup(&raw, repo, branch.c_str(), GIT_BRANCH_LOCAL);
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    return;
  }
  check(rc, "look up branch " + inQuotes(branch));
  git::ReferencePtr ref(raw);
  const int isHead = git_branch_is_head(ref.get());
  check(isHead, "check whether " + inQuotes(branch) + " is HEAD");
  if (isHead == 1 || git_branch_is_checked_out(ref.get()) == 1) {
    throw GitError(GIT_ERROR, GIT_ERROR_REFERENCE,
                   "cannot delete branch " + inQuotes(branch) + ": it is checked out");
  }
  check(git_reference_delete(ref.get()), "delete branch " + inQuotes(branch));
}

// ---- creation ---------------------------------------------------------------

// Fails before anything is made when any part of the name is taken.
void requireFree(git_repository* repo, const fs::path& commonDir, const Worktree& wt) {
  if (pathExists(adminDir(commonDir, wt.name))) {
    throw GitError(GIT_EEXISTS, GIT_ERROR_WORKTREE,
                   "worktree " + inQuotes(wt.name) + " already exists");
  }
  if (pathExists(wt.path)) {
    throw GitError(GIT_EEXISTS, GIT_ERROR_WORKTREE,
                   "worktree directory " + inQuotes(wt.path.string()) + " already exists");
  }
  git_reference* raw = nullptr;
  const int rc = git_reference_lookup(&raw, repo, refName(wt.branch).c_str());
  git::ReferencePtr existing(raw);
  if (rc == 0) {
    throw GitError(GIT_EEXISTS, GIT_ERROR_REFERENCE,
                   "branch " + inQuotes(wt.branch) + " already exists");
  }
  if (rc != GIT_ENOTFOUND) check(rc, "look up branch " + inQuotes(wt.branch));
  git_error_clear();
}

void createBranch(git_repository* repo, const Worktree& wt) {
  git::CommitPtr base = git::lookupCommit(repo, git::oidFromHex(wt.baseCommit));
  git_reference* raw = nullptr;
  check(git_branch_create(&raw, repo, wt.branch.c_str(), base.get(), /*force=*/0),
        "create branch " + inQuotes(wt.branch));
  git::ReferencePtr branch(raw);
}

// Registers the worktree on its branch without writing its files: checkOut()
// does that later, concurrently. Returns the directory as libgit2 recorded it.
// Call with registryMutex() held.
fs::path registerWorktree(git_repository* repo, const fs::path& commonDir, const Worktree& wt) {
  git_reference* rawRef = nullptr;
  check(git_branch_lookup(&rawRef, repo, wt.branch.c_str(), GIT_BRANCH_LOCAL),
        "look up branch " + inQuotes(wt.branch));
  git::ReferencePtr branch(rawRef);

  git_worktree_add_options options;
  check(git_worktree_add_options_init(&options, GIT_WORKTREE_ADD_OPTIONS_VERSION),
        "initialise worktree options");
  options.ref = branch.get();
  options.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;  // a dry run

  git_worktree* rawWorktree = nullptr;
  check(git_worktree_add(&rawWorktree, repo, wt.name.c_str(), wt.path.c_str(), &options),
        "add worktree " + inQuotes(wt.name) + " at " + inQuotes(wt.path.string()));
  git::WorktreePtr added(rawWorktree);
  writeMetadata(adminDir(commonDir, wt.name), wt);
  return fs::path(git_worktree_path(added.get()));
}

// Writes the branch's files and the worktree's index, with the worktree's
// own repository handle: from the object database directly on `writers`
// threads (core/git/checkout.h), or, when content filters apply, with
// libgit2's checkout. The dry run left an empty index, so a SAFE checkout
// would take every file as deliberately deleted and write none; FORCE is
// right here, as the directory is new and holds nothing to lose.
void checkOut(const Worktree& wt, std::size_t writers, const std::vector<std::string>& sparse) {
  if (git::writeTree(wt.path, wt.baseCommit, writers, sparse)) return;
  git::RepositoryPtr repo = git::openRepository(wt.path);
  git_checkout_options options;
  check(git_checkout_options_init(&options, GIT_CHECKOUT_OPTIONS_VERSION),
        "initialise checkout options");
  options.checkout_strategy = GIT_CHECKOUT_FORCE;
  check(git_checkout_head(repo.get(), &options),
        "check out " + inQuotes(wt.branch) + " in " + inQuotes(wt.path.string()));
  git::sparsify(wt.path, sparse);
}

void refill(const fs::path& commonDir, const Worktree& wt, std::size_t writers) {
  std::error_code ec;
  std::vector<fs::path> contents;
  for (const auto& entry : fs::directory_iterator(wt.path, ec)) {
    if (entry.path().filename() != ".git") contents.push_back(entry.path());
  }
  if (ec) throw osError("list " + inQuotes(wt.path.string()), ec);
  for (const fs::path& p : contents) removeTree(p);
  fs::remove(adminDir(commonDir, wt.name) / "index", ec);
  checkOut(wt, writers, {});
}

// Undoes a partly made worktree; used only while another error is in flight.
void discard(git_repository* repo, const fs::path& commonDir, const fs::path& workspaceDir,
             const Worktree& wt) noexcept {
  try {
    removeDirectory(workspaceDir, wt);
  } catch (...) {
  }
  try {
    RegistryLock lock(commonDir);
    try {
      unregister(commonDir, wt);
    } catch (...) {
    }
    deleteBranchIfPresent(repo, wt.branch);
  } catch (...) {
  }
}

// ---- the warm pool -----------------------------------------------------------

constexpr std::string_view kPoolPrefix = "_pool-";

bool isPoolName(std::string_view name) { return name.starts_with(kPoolPrefix); }

std::string newPoolName() { return std::string(kPoolPrefix) + randomHex(12); }

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Points the working directory's `.git` file and the metadata's `gitdir` at
// each other, as git worktree add writes them, whatever was there before (an
// agent can rewrite both).
void link(const fs::path& commonDir, const std::string& name, const fs::path& path) {
  const fs::path admin = adminDir(commonDir, name);
  writeWhole(admin / "gitdir", (path / ".git").string() + "\n");
  writeWhole(admin / "commondir", commonDir.string() + "/\n");
  const fs::path dotGit = path / ".git";
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(dotGit, ec))) removeTree(dotGit);
  writeWhole(dotGit, "gitdir: " + admin.string() + "/\n");
}

// True when the pool entry's two halves point at each other where they should.
bool linked(const fs::path& commonDir, const fs::path& workspaceDir, const std::string& name) {
  const fs::path admin = adminDir(commonDir, name);
  const fs::path path = workspaceDir / name;
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec)) &&
         trimmed(readFile(admin / "gitdir")) == (path / ".git").string() &&
         trimmed(readFile(path / ".git")) == "gitdir: " + admin.string() + "/";
}

// Clears a used worktree's metadata directory down to what git needs, on a
// detached HEAD at `commit`: the last agent's index, reflogs, merge or rebase
// state and per-worktree config go.
void resetMetadata(const fs::path& commonDir, const Worktree& wt, const std::string& commit) {
  const fs::path admin = adminDir(commonDir, wt.name);
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (const auto& entry : fs::directory_iterator(admin, ec)) {
    const std::string file = entry.path().filename().string();
    if (file != kWorktreeRecordFile && file != "gitdir" && file != "commondir" && file != "HEAD") {
      leftovers.push_back(entry.path());
    }
  }
  if (ec) throw osError("list " + inQuotes(admin.string()), ec);
  for (const fs::path& p : leftovers) removeTree(p);
  writeWhole(admin / "HEAD", commit + "\n");
  link(commonDir, wt.name, wt.path);
}

// Takes the pooled worktree for `wt`, whose branch exists: the metadata
// directory is renamed first, so of two hydras only one can win it. Returns
// false when another took it first. Call with registryMutex() held.
bool claim(const fs::path& commonDir, const PooledWorktree& pooled, const Worktree& wt) {
  const fs::path admin = adminDir(commonDir, wt.name);
  std::error_code ec;
  // The claimer owns it from here: if it dies half way, repairPool() may undo it.
  if (!pathExists(adminDir(commonDir, pooled.name))) return false;
  writeWhole(adminDir(commonDir, pooled.name) / kWorktreeRecordFile,
             "pooled " + pooled.commit + "\nbytes " + std::to_string(pooled.bytes) + "\n" + ownerLine(wt.owner));
  fs::rename(adminDir(commonDir, pooled.name), admin, ec);
  if (ec) return false;
  fs::rename(pooled.path, wt.path, ec);
  if (ec) {
    std::error_code back;
    fs::rename(admin, adminDir(commonDir, pooled.name), back);
    return false;
  }
  link(commonDir, wt.name, wt.path);
  writeWhole(admin / "HEAD", "ref: " + refName(wt.branch) + "\n");
  writeMetadata(admin, wt);
  return true;
}

// A directory set aside to be removed once the lock is let go: named for the
// hydra removing it, so that no other hydra deletes the same tree at the same
// time, and what a remover that died left is known for what it is.
constexpr std::string_view kSetAsidePrefix = "_pool-drop-";

// Moves `dir` (inside the workspace) to a set-aside name of `remover`'s.
// Call with the lock held; returns the new path.
fs::path setAside(const fs::path& workspaceDir, const fs::path& dir, const ProcessOwner& remover) {
  const fs::path target =
      workspaceDir / (std::string(kSetAsidePrefix) + toWord(remover) + "-" + newPoolName().substr(kPoolPrefix.size()));
  std::error_code ec;
  fs::rename(dir, target, ec);
  if (ec) throw osError("set aside " + inQuotes(dir.string()), ec);
  return target;
}


// Unregisters a pooled worktree and sets its directory aside; returns the
// directory to remove once the lock is let go. Call with the lock held.
std::optional<fs::path> drop(const fs::path& commonDir, const fs::path& workspaceDir, const PooledWorktree& pooled,
                             const ProcessOwner& remover) {
  retireRegistration(commonDir, adminDir(commonDir, pooled.name));
  if (!pathExists(pooled.path)) return std::nullopt;
  return setAside(workspaceDir, pooled.path, remover);
}

// A taken worktree that cannot be moved (content filters apply now) is
// emptied and checked out afresh.
void refill(const fs::path& commonDir, const Worktree& wt, std::size_t writers);

// ---- concurrency ------------------------------------------------------------

// Two threads per core (2 to 16): checkouts are mostly file-system calls,
// which block. Without thread support in libgit2 everything runs on one.
std::size_t threadLimit(std::size_t tasks) {
  if ((git_libgit2_features() & GIT_FEATURE_THREADS) == 0) return 1;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(tasks, 1, std::clamp<std::size_t>(2 * cores, 2, 16));
}

// Writer threads per checkout when `checkouts` run at once: together about
// as many as threadLimit() allows. On this project's virtual disk (see
// docs/benchmarks.md) eight checkouts four at a time with one writer each are
// as fast as with four each, and one checkout with four writers beats one
// writer by a third. HYDRA_CHECKOUT_WRITERS overrides it, for
// bench/worktree_bench, which measures what suits a disk.
std::size_t checkoutWriters(std::size_t checkouts) {
  if (const char* v = std::getenv("HYDRA_CHECKOUT_WRITERS")) {
    const int n = std::atoi(v);
    if (n >= 1 && n <= 64) return static_cast<std::size_t>(n);
  }
  const std::size_t concurrent = threadLimit(checkouts);
  return std::clamp<std::size_t>(threadLimit(64) / std::max<std::size_t>(1, concurrent), 1, 4);
}

// Runs task(i) for every i in [0, count) on a bounded pool and returns each
// task's exception (null on success). libgit2 objects must not cross threads:
// tasks open their own repository handles.
std::vector<std::exception_ptr> forEachConcurrently(std::size_t count,
                                                    const std::function<void(std::size_t)>& task) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 0; t < threadLimit(count); ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      if (pool.empty()) throw;
      break;  // the workers already running take the remaining tasks
    }
  }
  pool.clear();  // joins
  return errors;
}

std::exception_ptr firstError(const std::vector<std::exception_ptr>& errors) {
  for (const auto& e : errors) {
    if (e) return e;
  }
  return nullptr;
}

// ---- half-made registrations ---------------------------------------------------

// The registrations a hydra killed inside registerWorktree() left: entries of
// .git/worktrees that git cannot open, with hydra's metadata or a
// hydra/<name> branch. Every registration runs under the registry lock, so
// with it held none is being made now. Pool entries are repairPool()'s; a
// live owner's entry is left alone whatever state it is in.
std::vector<Worktree> halfRegistered(git_repository* repo, const fs::path& commonDir, const fs::path& workspaceDir) {
  std::vector<Worktree> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(commonDir / "worktrees", ec)) {
    const std::string name = entry.path().filename().string();
    if (!isSafeId(name) || isPoolName(name)) continue;
    git_worktree* raw = nullptr;
    if (git_worktree_lookup(&raw, repo, name.c_str()) == 0) {
      git::WorktreePtr complete(raw);
      continue;
    }
    git_error_clear();
    const auto meta = readMetadata(entry.path());
    if (meta && (!meta->pooled.empty() || !ownerIsDead(meta->owner))) continue;
    const std::string branch = meta && !meta->branch.empty() ? meta->branch : std::string(kBranchPrefix) + name;
    git_reference* ref = nullptr;
    const bool hasBranch = git_reference_lookup(&ref, repo, refName(branch).c_str()) == 0;
    git::ReferencePtr owned(ref);
    git_error_clear();
    if (!meta && !hasBranch) continue;  // not hydra's
    found.push_back({name, meta ? meta->agentId : "", workspaceDir / name, branch, meta ? meta->baseCommit : "",
                     meta ? meta->owner : std::nullopt});
  }
  return found;
}

}  // namespace

// ---- WorktreeManager ----------------------------------------------------------

WorktreeManager::WorktreeManager(fs::path repoRoot, fs::path workspaceDir) {
  git::RepositoryPtr repo = git::openRepository(repoRoot);
  repoRoot_ = git::workdir(repo.get());
  commonDir_ = git::commonDir(repo.get());
  const auto workspace = resolveInside(repoRoot_, workspaceDir.string());
  if (!workspace || *workspace == repoRoot_ || isWithin(commonDir_, *workspace) ||
      isWithin(repoRoot_ / ".git", *workspace)) {
    throw std::invalid_argument("workspace directory " + inQuotes(workspaceDir.string()) +
                                " must be a relative path to a directory inside " +
                                inQuotes(repoRoot_.string()) + " and outside .git");
  }
  workspaceDir_ = *workspace;
}

void WorktreeManager::ensureExcluded() {
  const fs::path file = commonDir_ / "info" / "exclude";
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) throw osError("create " + inQuotes(file.parent_path().string()), ec);

  // The user's own file: one that cannot be read whole is an error, never
  // taken for empty and rewritten without its patterns.
  std::string content;
  if (pathExists(file)) {
    try {
      content = readRegularFile(file, std::size_t{16} << 20);
    } catch (const std::exception& e) {
      throw GitError(GIT_ERROR, GIT_ERROR_OS, "cannot add hydra's folders to " + inQuotes(file.string()) + ": " + e.what());
    }
  }
  const std::set<std::string> present = linesOf(content);
  std::string missing;
  for (const std::string& pattern :
       {ignorePatternFor(workspaceDir_.lexically_relative(repoRoot_)), std::string(".hydra/")}) {
    if (!present.contains(pattern)) missing += pattern + "\n";
  }
  if (missing.empty()) return;

  // Rewritten whole rather than appended to: a link in its place is replaced, not followed.
  writeWhole(file, content + (!content.empty() && content.back() != '\n' ? "\n" : "") + missing);
}

Worktree WorktreeManager::create(const std::string& agentId, const std::string& baseCommit,
                                 const std::string& timestamp, bool fromPool) {
  std::vector<Worktree> made = createMany({agentId}, baseCommit, timestamp, fromPool);
  return std::move(made.front());
}

std::vector<Worktree> WorktreeManager::createMany(const std::vector<std::string>& agentIds,
                                                  const std::string& baseCommit,
                                                  const std::string& timestamp, bool fromPool) {
  requireSafeId("timestamp", timestamp);
  std::set<std::string> seen;
  for (const std::string& id : agentIds) {
    requireSafeId("agent id", id);
    if (!seen.insert(id).second)
      throw std::invalid_argument("agent id " + inQuotes(id) + " given twice");
  }
  if (agentIds.empty()) return {};

  git::RepositoryPtr repo = git::openRepository(repoRoot_);
  // Resolved once, so every agent starts from the same commit even if the ref moves.
  const std::string base = git::toHex(git::resolveCommit(repo.get(), baseCommit));

  std::vector<Worktree> plans;
  for (const std::string& id : agentIds) {
    const std::string name = id + "-" + timestamp;
    plans.push_back({name, id, workspaceDir_ / name, std::string(kBranchPrefix) + name, base, owner()});
  }
  for (const Worktree& wt : plans) requireFree(repo.get(), commonDir_, wt);

  ensureExcluded();
  // .git/worktrees too: libgit2 fails when another process creates it at the same moment.
  std::error_code ec;
  for (const fs::path& dir : {workspaceDir_, commonDir_ / "worktrees"}) {
    fs::create_directories(dir, ec);
    if (ec) throw osError("create " + inQuotes(dir.string()), ec);
  }

  const std::vector<std::string> sparse = sparsePaths();
  std::optional<fs::path> journal;                         // writeCreationJournal()
  std::size_t made = 0;                                    // plans whose branch exists
  std::vector<std::optional<std::string>> pooledAt(plans.size());  // taken from the pool: its commit
  try {
    {
      RegistryLock lock(commonDir_);
      std::vector<PooledWorktree> available =
          fromPool && sparse.empty() ? pool() : std::vector<PooledWorktree>{};
      journal = writeCreationJournal(commonDir_, plans, owner());
      for (std::size_t i = 0; i < plans.size(); ++i) {
        Worktree& wt = plans[i];
        createBranch(repo.get(), wt);
        ++made;
        while (!pooledAt[i] && !available.empty()) {
          const PooledWorktree candidate = std::move(available.back());
          available.pop_back();
          if (claim(commonDir_, candidate, wt)) pooledAt[i] = candidate.commit;
        }
        if (!pooledAt[i]) wt.path = registerWorktree(repo.get(), commonDir_, wt);
      }
    }
    const std::size_t fresh = static_cast<std::size_t>(std::count(pooledAt.begin(), pooledAt.end(), std::nullopt));
    const auto errors =
        forEachConcurrently(plans.size(), [&, writers = checkoutWriters(std::max<std::size_t>(1, fresh))](std::size_t i) {
          if (!pooledAt[i]) {
            checkOut(plans[i], writers, sparse);
          } else if (!git::moveTree(plans[i].path, *pooledAt[i], plans[i].baseCommit)) {
            refill(commonDir_, plans[i], writers);
          }
        });
    if (const std::exception_ptr error = firstError(errors)) std::rethrow_exception(error);
  } catch (...) {
    for (std::size_t i = 0; i < made; ++i) discard(repo.get(), commonDir_, workspaceDir_, plans[i]);
    if (journal) fs::remove(*journal, ec);
    throw;
  }
  fs::remove(*journal, ec);
  return plans;
}

std::vector<Worktree> WorktreeManager::list() {
  git::RepositoryPtr repo = git::openRepository(repoRoot_);
  git::StrArray names;
  check(git_worktree_list(&names.value, repo.get()), "list worktrees");

  std::vector<Worktree> found;
  for (std::size_t i = 0; i < names.value.count; ++i) {
    const std::string name = names.value.strings[i];
    git_worktree* raw = nullptr;
    if (git_worktree_lookup(&raw, repo.get(), name.c_str()) < 0) {
      git_error_clear();  // removed meanwhile, or not a complete worktree
      continue;
    }
    git::WorktreePtr handle(raw);
    const fs::path admin = adminDir(commonDir_, name);
    const auto meta = readMetadata(admin);
    if (isPoolName(name) || (meta && !meta->pooled.empty())) continue;  // pool() lists those

    // hydra's record wins: an agent may have switched its worktree to another branch.
    Worktree wt{name, "", fs::path(git_worktree_path(handle.get())), "", "", std::nullopt};
    if (meta && !meta->branch.empty()) {
      wt.agentId = meta->agentId;
      wt.baseCommit = meta->baseCommit;
      wt.branch = meta->branch;
      wt.owner = meta->owner;
    } else if (const auto branch = headBranch(admin);
               branch && branch->starts_with(kBranchPrefix)) {
      wt.branch = *branch;
    } else {
      continue;
    }
    found.push_back(std::move(wt));
  }
  std::sort(found.begin(), found.end(),
            [](const Worktree& a, const Worktree& b) { return a.name < b.name; });
  return found;
}

void WorktreeManager::remove(const Worktree& worktree, bool deleteBranch) {
  removeAll({worktree}, deleteBranch);
}

void WorktreeManager::removeAll(const std::vector<Worktree>& worktrees, bool deleteBranch) {
  for (const Worktree& wt : worktrees) requireRemovable(wt, deleteBranch);
  if (worktrees.empty()) return;

  std::vector<std::exception_ptr> errors =
      forEachConcurrently(worktrees.size(), [&](std::size_t i) {
        git::RepositoryPtr own = git::openRepository(repoRoot_);
        requireUnlocked(own.get(), worktrees[i]);
        removeDirectory(workspaceDir_, worktrees[i]);
      });

  git::RepositoryPtr repo = git::openRepository(repoRoot_);
  RegistryLock lock(commonDir_);
  for (std::size_t i = 0; i < worktrees.size(); ++i) {
    if (errors[i]) continue;
    const bool journaled = deleteBranch && worktrees[i].branch.starts_with(kBranchPrefix);
    const fs::path journal = branchJournal(commonDir_, worktrees[i].name);
    try {
      if (journaled) writeWhole(journal, worktrees[i].branch + "\n");
      unregister(commonDir_, worktrees[i]);
      // Only now: a branch checked out in a worktree cannot be deleted.
      if (deleteBranch) deleteBranchIfPresent(repo.get(), worktrees[i].branch);
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (journaled) {
      std::error_code ec;
      fs::remove(journal, ec);
    }
  }
  if (const std::exception_ptr error = firstError(errors)) std::rethrow_exception(error);
}

std::vector<Worktree> WorktreeManager::prune(const std::function<bool(const Worktree&)>& isLive, bool deleteBranches) {
  std::vector<Worktree> dead;
  std::vector<Worktree> halfMade;  // unregistered here; their directories removed after the lock
  {
    // Decided under the lock: a worktree another hydra is registering has
    // its owner written before the lock is let go, so it is never seen ownerless.
    RegistryLock lock(commonDir_);
    git::RepositoryPtr repo = git::openRepository(repoRoot_);
    // First: libgit2 takes every branch for checked out while an empty one exists.
    removeEmptyRegistrations(commonDir_);
    finishRetirements(commonDir_);
    // Branches never checked out hold nothing of an agent's: they go even when branches are kept.
    finishBranchCreations(repo.get(), commonDir_);
    if (deleteBranches) finishBranchDeletions(repo.get(), commonDir_);
    for (Worktree& wt : halfRegistered(repo.get(), commonDir_, workspaceDir_)) {
      if (isLive(wt)) continue;  // a race's record names it: kept, as its worktrees are
      if (deleteBranches && wt.branch.starts_with(kBranchPrefix)) {
        writeWhole(branchJournal(commonDir_, wt.name), wt.branch + "\n");
      }
      retireRegistration(commonDir_, adminDir(commonDir_, wt.name));
      halfMade.push_back(std::move(wt));
    }
    // Only once none is left: libgit2 takes a branch for checked out while a half-made entry exists.
    for (const Worktree& wt : halfMade) {
      if (deleteBranches && wt.branch.starts_with(kBranchPrefix)) {
        deleteBranchIfPresent(repo.get(), wt.branch);
        std::error_code ec;
        fs::remove(branchJournal(commonDir_, wt.name), ec);
      }
    }
    for (Worktree& wt : list()) {
      if (!ownerIsDead(wt.owner) || isLive(wt) || !wt.branch.starts_with(kBranchPrefix)) continue;
      // Taken over: another hydra pruning now sees a live owner and leaves it to this one.
      Worktree takenOver = wt;
      takenOver.owner = owner();
      writeMetadata(adminDir(commonDir_, wt.name), takenOver);
      dead.push_back(std::move(wt));
    }
  }
  // A dead owner's worktree stays dead: removed outside the lock (slow).
  // Nobody else removes a half-made one: its metadata is gone.
  for (const Worktree& wt : halfMade) removeDirectory(workspaceDir_, wt);
  removeAll(dead, deleteBranches);
  dead.insert(dead.end(), halfMade.begin(), halfMade.end());
  return dead;
}

bool WorktreeManager::poolOne(const Worktree& wt, bool deleteBranch, const std::vector<std::string>& keep) {
  const fs::path admin = adminDir(commonDir_, wt.name);
  std::error_code ec;
  if (wt.baseCommit.empty() || !isBelow(workspaceDir_, wt.path) || !fs::is_directory(fs::symlink_status(wt.path, ec)) ||
      !fs::is_directory(admin, ec)) {
    return false;
  }
  git::RepositoryPtr repo = git::openRepository(repoRoot_);
  requireUnlocked(repo.get(), wt);
  resetMetadata(commonDir_, wt, wt.baseCommit);
  const std::optional<std::uintmax_t> bytes = git::resetTree(wt.path, wt.baseCommit, keep);
  if (!bytes) return false;
  // Written before the renames: an entry with it under a name not yet the
  // pool's was being pooled when hydra stopped (repairPool()).
  // The owner says who is pooling it, so no other hydra repairs it meanwhile.
  // The branch to delete goes along: until the lock below deletes it, this
  // file is the only place that still names it (HEAD is detached now), and a
  // repair of what a killed hydra left half pooled deletes it from here.
  writeWhole(admin / kWorktreeRecordFile, "pooled " + wt.baseCommit + "\nbytes " + std::to_string(*bytes) + "\n" +
                                        (deleteBranch ? "branch " + wt.branch + "\n" : "") + ownerLine(owner()));

  const std::string name = newPoolName();
  const fs::path path = workspaceDir_ / name;
  RegistryLock lock(commonDir_);
  if (deleteBranch) deleteBranchIfPresent(repo.get(), wt.branch);
  fs::rename(admin, adminDir(commonDir_, name), ec);
  if (ec) throw osError("pool " + inQuotes(wt.name), ec);
  try {
    fs::rename(wt.path, path, ec);
    if (ec) throw osError("pool " + inQuotes(wt.path.string()), ec);
    link(commonDir_, name, path);
  } catch (...) {
    // Half pooled is no use: gone entirely.
    for (const fs::path& p : {wt.path, path}) {
      if (pathExists(p)) removeTree(p);
    }
    retireRegistration(commonDir_, adminDir(commonDir_, name));
    throw;
  }
  return true;
}

std::vector<Worktree> WorktreeManager::release(const std::vector<Worktree>& worktrees, bool deleteBranch,
                                     const PoolPolicy& policy) {
  for (const Worktree& wt : worktrees) requireRemovable(wt, deleteBranch);
  std::vector<PooledWorktree> pooled = pool();
  // pool_size was lowered: the pool shrinks to it (its worktrees are alike).
  while (pooled.size() > policy.size) {
    std::optional<fs::path> aside;
    {
      RegistryLock lock(commonDir_);
      aside = drop(commonDir_, workspaceDir_, pooled.back(), owner());
    }
    if (aside) removeTree(*aside);
    pooled.pop_back();
  }
  // A sparse checkout is not what a pooled worktree holds.
  const std::size_t room = sparsePaths().empty() ? policy.size - pooled.size() : 0;
  const std::size_t tries = std::min(room, worktrees.size());
  std::vector<char> kept(worktrees.size(), 0);  // not vector<bool>: written from several threads
  forEachConcurrently(tries, [&](std::size_t i) { kept[i] = poolOne(worktrees[i], deleteBranch, policy.keepIgnored); });
  std::vector<Worktree> rest;
  std::vector<Worktree> pooledNow;
  for (std::size_t i = 0; i < worktrees.size(); ++i) (kept[i] ? pooledNow : rest).push_back(worktrees[i]);
  removeAll(rest, deleteBranch);
  return pooledNow;
}

std::vector<PooledWorktree> WorktreeManager::pool() {
  std::vector<PooledWorktree> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(commonDir_ / "worktrees", ec)) {
    const std::string name = entry.path().filename().string();
    if (!isPoolName(name)) continue;
    const auto meta = readMetadata(entry.path());
    if (!meta || meta->pooled.empty() || !linked(commonDir_, workspaceDir_, name)) continue;
    found.push_back({name, workspaceDir_ / name, meta->pooled, meta->bytes});
  }
  std::sort(found.begin(), found.end(),
            [](const PooledWorktree& a, const PooledWorktree& b) { return a.name < b.name; });
  return found;
}

std::vector<PooledWorktree> WorktreeManager::emptyPool() {
  std::vector<PooledWorktree> removed;
  std::vector<fs::path> aside;
  {
    RegistryLock lock(commonDir_);
    removed = pool();
    for (const PooledWorktree& p : removed) {
      if (auto dir = drop(commonDir_, workspaceDir_, p, owner())) aside.push_back(*dir);
    }
  }
  for (const fs::path& dir : aside) removeTree(dir);
  return removed;
}

std::vector<fs::path> WorktreeManager::repairPool() {
  std::vector<fs::path> removed;
  std::vector<fs::path> aside;  // removed once the lock is let go
  {
    RegistryLock lock(commonDir_);
    finishRetirements(commonDir_);
    const ProcessOwner self = owner();
    std::error_code ec;
    std::vector<fs::path> admins;
    for (const auto& entry : fs::directory_iterator(commonDir_ / "worktrees", ec)) admins.push_back(entry.path());
    for (const fs::path& admin : admins) {
      const std::string name = admin.filename().string();
      const auto meta = readMetadata(admin);
      const bool pooledMeta = meta && !meta->pooled.empty();
      if (!isPoolName(name) && !pooledMeta) continue;
      if (isPoolName(name) && pooledMeta && linked(commonDir_, workspaceDir_, name)) continue;
      // Being pooled by a hydra that still runs: its to finish.
      if (meta && !ownerIsDead(meta->owner)) continue;
      // Half pooled or half taken: its directory is where gitdir says, or under either name.
      const fs::path recorded = fs::path(trimmed(readFile(admin / "gitdir"))).parent_path();
      for (const fs::path& dir : {recorded, workspaceDir_ / name}) {
        if (dir.empty() || !isBelow(workspaceDir_, dir) || !pathExists(dir)) continue;
        aside.push_back(setAside(workspaceDir_, dir, self));
        removed.push_back(dir);
      }
      // Killed before the branch of the race it served was deleted: it goes
      // once the entry is gone (finishBranchDeletions(), through the journal,
      // so that a failure or a kill now does not leave it named nowhere).
      if (pooledMeta && !isPoolName(name) && meta->branch.starts_with(kBranchPrefix)) {
        writeWhole(branchJournal(commonDir_, name), meta->branch + "\n");
      }
      // Without its metadata nobody can claim it any more.
      retireRegistration(commonDir_, admin);
      removed.push_back(admin);
    }
    {
      git::RepositoryPtr repo = git::openRepository(repoRoot_);
      finishBranchCreations(repo.get(), commonDir_);
      finishBranchDeletions(repo.get(), commonDir_);
    }
    // Directories named like pool entries that git no longer knows (claims
    // and returns rename under the lock, so none is half done now), and
    // those a remover that died had set aside.
    std::vector<fs::path> strays;
    for (const auto& entry : fs::directory_iterator(workspaceDir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (!isPoolName(name) || pathExists(adminDir(commonDir_, name))) continue;
      if (std::find(aside.begin(), aside.end(), entry.path()) != aside.end()) continue;  // just set aside
      if (const auto remover = ownerInName(name, kSetAsidePrefix); remover && !ownerIsDead(remover)) continue;  // being removed
      strays.push_back(entry.path());
    }
    for (const fs::path& dir : strays) {
      aside.push_back(setAside(workspaceDir_, dir, self));
      removed.push_back(dir);
    }
  }
  for (const fs::path& dir : aside) removeTree(dir);
  return removed;
}

namespace {

struct CloseFd {
  int fd;
  ~CloseFd() { ::close(fd); }
};

// Runs `call`, a libgit2 call that writes into the object store, and throws
// as check() does when it fails. A write the file system refused (a full
// disk) leaves libgit2 without a message (its buffered file only notes that
// the write failed), so the reason is then the errno the failed write left.
// `what` is read only when the call failed.
template <class Call>
void storing(Call call, const std::string& what) {
  errno = 0;
  const int rc = call();
  const int failure = errno;
  if (rc >= 0) return;
  if (git_error_last() == nullptr && failure != 0) {
    throw GitError(rc, GIT_ERROR_OS, what + ": " + std::strerror(failure));
  }
  check(rc, what);
}

// Where `repo`'s writes go, for errors about writing there: the
// quarantine's directory, or ".../.git/objects".
std::string objectStore(git_repository* repo, const ObjectQuarantine* quarantine) {
  return quarantine != nullptr ? quarantine->path().string() : (git::commonDir(repo) / "objects").string();
}

// Writes the file at `path` (relative to the worktree) into the object store
// a megabyte at a time and stages it, so that git_index_add_all() finds it
// up to date and leaves it alone. A file that a filter would change on its
// way in (core.autocrlf, a filter attribute) is left to git_index_add_all().
void stageStreamed(git_repository* repo, git_index* index, const fs::path& root, const std::string& path,
                   const std::atomic<bool>* cancel, const ObjectQuarantine* quarantine) {
  git_filter_list* rawFilters = nullptr;
  check(git_filter_list_load(&rawFilters, repo, nullptr, path.c_str(), GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT),
        "load the filters of " + path);
  if (rawFilters != nullptr) {
    git_filter_list_free(rawFilters);
    return;
  }
  const int fd = ::open((root / path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ELOOP) return;  // gone, or a link now: git_index_add_all() decides
    throw GitError(GIT_ERROR, GIT_ERROR_OS, "open " + path + ": " + std::strerror(errno));
  }
  const CloseFd closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) < 0) throw GitError(GIT_ERROR, GIT_ERROR_OS, "stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return;
  git_odb* rawOdb = nullptr;
  check(git_repository_odb(&rawOdb, repo), "open the object store");
  const git::OdbPtr odb(rawOdb);
  git_odb_stream* rawStream = nullptr;
  check(git_odb_open_wstream(&rawStream, odb.get(), static_cast<git_object_size_t>(st.st_size), GIT_OBJECT_BLOB),
        "store " + path);
  // Freed unfinished (a cancel, an error), the stream removes its temporary file.
  const git::OdbStreamPtr stream(rawStream);
  const std::string store = "store " + path + " in " + objectStore(repo, quarantine);
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) throw ResultCancelled();
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw GitError(GIT_ERROR, GIT_ERROR_OS, "read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    storing([&] { return git_odb_stream_write(stream.get(), buffer.data(), static_cast<std::size_t>(n)); }, store);
  }
  git_oid id;
  storing([&] { return git_odb_stream_finalize_write(&id, stream.get()); }, store);
  const git_index_entry entry = git::indexEntryFromStat(
      st, (st.st_mode & S_IXUSR) != 0 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB, id, path.c_str());
  check(git_index_add(index, &entry), "stage " + path);
}

}  // namespace

std::optional<std::string> WorktreeManager::commitAll(const Worktree& worktree,
                                                      const std::string& message,
                                                      const std::atomic<bool>* cancel,
                                                      const ResultSize* measured,
                                                      const ObjectQuarantine* quarantine) {
  git::RepositoryPtr repo = git::openRepository(worktree.path);
  // Only ever write a linked worktree's own index, never the user's.
  std::error_code ec;
  if (!git_repository_is_worktree(repo.get()) ||
      !fs::equivalent(git::commonDir(repo.get()), commonDir_, ec)) {
    throw GitError(
        GIT_ENOTFOUND, GIT_ERROR_WORKTREE,
        inQuotes(worktree.path.string()) + " is not a worktree of " + inQuotes(repoRoot_.string()));
  }
  const std::optional<std::string> onBranch = git::currentBranch(repo.get());
  if (onBranch != worktree.branch) {
    throw GitError(GIT_EINVALID, GIT_ERROR_WORKTREE,
                   "worktree " + inQuotes(worktree.name) + " is on " +
                       (onBranch ? inQuotes(*onBranch) : std::string("a detached HEAD")) +
                       ", not on its branch " + inQuotes(worktree.branch));
  }

  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo.get()),
        "open the index of " + inQuotes(worktree.name));
  git::IndexPtr index(rawIndex);
  // A file outside a sparse checkout is absent on purpose (skip-worktree),
  // not deleted: libgit2 1.5 does not tell the two apart, so both passes
  // leave such an entry alone unless the agent put a file there.
  // The same callback is where a cancel stops the staging, between files.
  // It also notes the file being staged, which a failure (a full object
  // store) is about: libgit2 does not name it.
  struct Sparse {
    git_index* index;
    fs::path root;
    const std::atomic<bool>* cancel;
    std::string staging;
  } sparse{index.get(), worktree.path, cancel, {}};
  auto keepSkipped = [](const char* path, const char*, void* payload) -> int {
    auto& s = *static_cast<Sparse*>(payload);
    if (s.cancel != nullptr && s.cancel->load(std::memory_order_relaxed)) return GIT_EUSER;
    s.staging = path;
    const git_index_entry* entry = git_index_get_bypath(s.index, path, 0);
    if (entry == nullptr || (entry->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) == 0) return 0;
    return pathExists(s.root / path) ? 0 : 1;
  };
  // add_all picks up new and modified files (skipping ignored ones);
  // update_all drops the entries of deleted files. Together: `git add -A`.
  // Every object from here on goes to the race's quarantine, if it has one.
  if (quarantine != nullptr) {
    if (!worktree.baseCommit.empty()) {
      // What the agent's own commits wrote goes there too (read through every
      // store, before the writes below are kept to the race's own).
      quarantine->claim(repo.get(), git::toHex(git::resolveCommit(repo.get(), "HEAD")), worktree.baseCommit);
      // A race started from another race's result: that result becomes the
      // user's own, as a merge would make it, so this race's writes find it.
      if (const auto other = ObjectQuarantine::holding(commonDir_, worktree.baseCommit);
          other && other->path() != quarantine->path()) {
        other->adopt(worktree.baseCommit);
      }
    }
    quarantine->writeInto(repo.get());
  }
  const bool exact = measured != nullptr && measured->exact && !measured->overLimit;
  if (exact) {
    // What the walk found gone leaves first: a file may now stand where a
    // folder of tracked files was, or the other way round.
    for (const std::string& path : measured->gone) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) throw ResultCancelled();
      if (git_index_remove_bypath(index.get(), path.c_str()) != 0) git_error_clear();
    }
  }
  if (measured != nullptr) {
    for (const std::string& path : measured->largeFiles) {
      stageStreamed(repo.get(), index.get(), worktree.path, path, cancel, quarantine);
    }
  }
  const std::string store = " into " + objectStore(repo.get(), quarantine);
  std::string what;
  const auto staged = [&](const auto& call) {
    storing(
        [&] {
          const int rc = call();
          if (rc == GIT_EUSER) throw ResultCancelled();
          what = sparse.staging.empty() ? "stage files in " + inQuotes(worktree.name) + store
                                        : "stage " + sparse.staging + store;
          return rc;
        },
        what);
  };
  if (exact) {
    // Only what changed: the walk that measured the result found it.
    const std::set<std::string> streamed(measured->largeFiles.begin(), measured->largeFiles.end());
    for (const std::string& path : measured->toStage) {
      if (streamed.count(path) != 0) continue;
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) throw ResultCancelled();
      sparse.staging = path;
      staged([&] { return git_index_add_bypath(index.get(), path.c_str()); });
    }
  } else {
    staged([&] { return git_index_add_all(index.get(), nullptr, GIT_INDEX_ADD_DEFAULT, keepSkipped, &sparse); });
    sparse.staging.clear();
    staged([&] { return git_index_update_all(index.get(), nullptr, keepSkipped, &sparse); });
  }
  // The tree first: libgit2 caches its folders' trees in the index (the
  // TREE extension), so the index written after it lets the next commit of
  // this worktree write only what changed again. An index nothing was
  // staged in is as it was: not written at all.
  git_oid treeId;
  storing([&] { return git_index_write_tree(&treeId, index.get()); },
          "write tree for " + inQuotes(worktree.name) + store);
  const bool unchanged = exact && measured->toStage.empty() && measured->gone.empty() && measured->largeFiles.empty();
  if (!unchanged) {
    storing([&] { return git_index_write(index.get()); }, "write the index of " + inQuotes(worktree.name));
  }
  git::CommitPtr parent = git::lookupCommit(repo.get(), git::resolveCommit(repo.get(), "HEAD"));
  if (git_oid_equal(&treeId, git_commit_tree_id(parent.get()))) return std::nullopt;

  git_tree* rawTree = nullptr;
  check(git_tree_lookup(&rawTree, repo.get(), &treeId), "look up tree " + git::toHex(treeId));
  git::TreePtr tree(rawTree);
  git::SignaturePtr hydra = git::makeSignature(kAuthorName, kAuthorEmail);
  const git_commit* parents[] = {parent.get()};
  git_oid commitId;
  storing(
      [&] {
        return git_commit_create(&commitId, repo.get(), refName(worktree.branch).c_str(), hydra.get(), hydra.get(),
                                 nullptr, message.c_str(), tree.get(), 1, parents);
      },
      "commit in worktree " + inQuotes(worktree.name) + store);
  return git::toHex(commitId);
}

namespace {
// In a quarantine's info/: the workspace whose race it holds.
constexpr std::string_view kQuarantineWorkspace = "hydra-workspace";
}  // namespace

ObjectQuarantine WorktreeManager::quarantine(std::string_view raceId) const {
  ObjectQuarantine made = ObjectQuarantine::open(commonDir_, raceId);
  const SafeDir info = SafeDir::open(made.path() / "info");
  if (!info.status(kQuarantineWorkspace)) info.writeFile(kQuarantineWorkspace, repoRoot_.string() + "\n");
  return made;
}

std::vector<ObjectQuarantine> WorktreeManager::quarantines() const {
  std::vector<ObjectQuarantine> mine;
  for (const std::string& name : ObjectQuarantine::list(commonDir_)) {
    auto found = ObjectQuarantine::find(commonDir_, name);
    if (!found) continue;
    try {
      const SafeDir info = SafeDir::open(found->path() / "info");
      if (!info.status(kQuarantineWorkspace)) continue;  // not made by a workspace: no race to judge it by
      if (info.readFile(kQuarantineWorkspace) != repoRoot_.string() + "\n") continue;
    } catch (const std::exception&) {
      continue;  // unreadable: left alone
    }
    mine.push_back(std::move(*found));
  }
  return mine;
}

void WorktreeManager::setOwner(ProcessOwner owner) {
  std::lock_guard lock(sparseMutex_);
  owner_ = std::move(owner);
}

ProcessOwner WorktreeManager::owner() const {
  std::lock_guard lock(sparseMutex_);
  return owner_;
}

void WorktreeManager::setSparsePaths(std::vector<std::string> paths) {
  std::lock_guard lock(sparseMutex_);
  sparse_ = std::move(paths);
}

std::vector<std::string> WorktreeManager::sparsePaths() const {
  std::lock_guard lock(sparseMutex_);
  return sparse_;
}

std::string WorktreeManager::headCommit(const Worktree& worktree) {
  git::RepositoryPtr repo = git::openRepository(repoRoot_);
  git_oid id;
  check(git_reference_name_to_id(&id, repo.get(), refName(worktree.branch).c_str()),
        "read branch " + inQuotes(worktree.branch));
  return git::toHex(id);
}

}  // namespace hydra::core
