#pragma once

// Throwaway git repositories for the core/git tests, built and inspected with
// the git CLI so that what libgit2 did is checked by an independent tool.

#include <filesystem>
#include <string>

namespace hydra::core::testing {

// Runs `command` through /bin/sh and returns its standard output. Throws
// std::runtime_error (with the command's standard error) when it exits non-zero.
std::string run(const std::string& command);

// Quotes `s` for /bin/sh.
std::string shellQuote(const std::string& s);

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A repository on branch `main` in its own temp dir. Unless `empty`, it holds
// one commit with README.md, src/a.txt, src/b.txt and a .gitignore that
// ignores *.log and build/. git runs without the user's or the system's config.
class TempRepo {
 public:
  explicit TempRepo(bool empty = false);

  // The canonical working directory.
  const std::filesystem::path& root() const { return root_; }
  // A scratch directory next to the repository (not inside it).
  std::filesystem::path outside() const { return dir_.path() / "outside"; }

  // Runs `git -C <dir> <args>` and returns its output with trailing newlines removed.
  std::string git(const std::string& args) const { return gitIn(root_, args); }
  static std::string gitIn(const std::filesystem::path& dir, const std::string& args);

  // Writes `content` to `relative` (below root), making directories as needed.
  void write(const std::filesystem::path& relative, const std::string& content) const;
  // Stages everything and commits; returns the new commit id.
  std::string commit(const std::string& message) const;

  // Points libgit2's global, XDG and system config lookups at an empty
  // directory, so the user's settings cannot change what the tests see.
  // libgit2 must be initialised; the setting lasts until it is shut down.
  void isolateLibgit2() const;

 private:
  TempDir dir_;
  std::filesystem::path root_;
};

std::string readFile(const std::filesystem::path& path);
void writeFile(const std::filesystem::path& path, const std::string& content);

}  // namespace hydra::core::testing
