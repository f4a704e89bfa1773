#include "core/checks/build_script.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <set>
#include <system_error>

#include "core/checks/protected_paths.h"
#include "core/git/git.h"

namespace hydra::core::checks {

namespace {

using Words = std::vector<std::string>;

// The simple commands of a shell line, as words with their quotes taken off,
// and "(" and ")" where a subshell starts and ends. Not a shell: no expansion,
// no here-documents; enough to find what runs.
std::vector<Words> simpleCommands(std::string_view line) {
  std::vector<Words> commands(1);
  std::string word;
  bool inWord = false;
  auto endWord = [&] {
    if (inWord) commands.back().push_back(word);
    word.clear();
    inWord = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      inWord = true;
      for (++i; i < line.size() && line[i] != c; ++i) {
        if (c == '"' && line[i] == '\\' && i + 1 < line.size()) ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      inWord = true;
      word += line[++i];
    } else if (c == ';' || c == '&' || c == '|' || c == '\n') {
      endWord();
      if (!commands.back().empty()) commands.emplace_back();
    } else if (c == '(' || c == ')') {
      // A subshell's bounds, as commands of their own: a `cd` inside one ends with it.
      endWord();
      if (commands.back().empty()) commands.pop_back();
      commands.push_back({std::string(1, c)});
      commands.emplace_back();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      endWord();
    } else {
      inWord = true;
      word += c;
    }
  }
  endWord();
  if (commands.back().empty()) commands.pop_back();
  return commands;
}

bool isAssignment(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0 || std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string baseName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where a command runs, relative to the repository's root ("" for the root
// itself); nullopt once a `cd` went somewhere hydra cannot follow.
using Folder = std::optional<std::string>;

// `word` as a path relative to the repository's root, when it names a path
// in it plainly from `folder`: relative, without anything a shell expands,
// not climbing out of the repository. "" for the root.
std::optional<std::string> pathIn(const Folder& folder, const std::string& word) {
  if (!folder || word.empty() || word.starts_with('/') || word.starts_with('-') ||
      word.find_first_of("*?[]$~{}`") != std::string::npos) {
    return std::nullopt;
  }
  std::vector<std::string> segments;
  auto walk = [&segments](const std::string& path) {
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      const std::string segment = path.substr(start, end - start);
      if (segment == "..") {
        if (segments.empty()) return false;
        segments.pop_back();
      } else if (!segment.empty() && segment != ".") {
        segments.push_back(segment);
      }
      start = end + 1;
    }
    return true;
  };
  if (!walk(*folder) || !walk(word)) return std::nullopt;
  std::string path;
  for (const std::string& segment : segments) path += (path.empty() ? "" : "/") + segment;
  return path;
}

// `word` as an anchored glob for the file it names in the repository, when it
// names one plainly from `folder` (pathIn()).
std::optional<std::string> namedFile(const Folder& folder, const std::string& word) {
  const std::optional<std::string> path = pathIn(folder, word);
  if (!path || path->empty() || !protectedPatternProblem(*path).empty()) return std::nullopt;
  return "/" + *path;
}

// The files a tool reads its steps from, by the name it is run as.
const std::vector<std::string>* toolScripts(const std::string& tool) {
  static const std::vector<std::string> kMake = {"Makefile", "GNUmakefile", "makefile", "*.mk"};
  static const std::vector<std::string> kCmake = {"CMakeLists.txt", "*.cmake", "CMakePresets.json",
                                                  "CMakeUserPresets.json"};
  static const std::vector<std::string> kNode = {"package.json"};
  static const std::vector<std::string> kCargo = {"Cargo.toml", "build.rs", ".cargo/config.toml", ".cargo/config"};
  static const std::vector<std::string> kGo = {"go.mod", "go.work"};
  static const std::vector<std::string> kNinja = {"*.ninja"};
  static const std::vector<std::string> kMeson = {"meson.build", "meson_options.txt", "meson.options"};
  if (tool == "make" || tool == "gmake") return &kMake;
  if (tool == "cmake") return &kCmake;
  if (tool == "npm" || tool == "yarn" || tool == "pnpm") return &kNode;
  if (tool == "cargo") return &kCargo;
  if (tool == "go") return &kGo;
  if (tool == "ninja") return &kNinja;
  if (tool == "meson") return &kMeson;
  return nullptr;
}

bool isInterpreter(const std::string& tool) {
  static const std::set<std::string> kInterpreters = {"sh",      "bash",    "dash", "zsh",  "ksh",
                                                      "python",  "python3", "node", "perl", "ruby"};
  return kInterpreters.contains(tool);
}

bool isWrapper(const std::string& word) {
  return word == "env" || word == "time" || word == "exec" || word == "nice" || word == "command";
}

// The scripts of package.json a package manager's command runs, by name, with
// npm's pre- and post-scripts: `npm run build` (run-script; test, start, stop
// and restart), `yarn build`, `yarn run build`, `pnpm run build`. `folder`
// becomes the package's when the command names one (npm's --prefix, pnpm's
// -C and --dir, yarn's --cwd).
std::vector<std::string> packageScriptsRun(const std::string& tool, const Words& words, std::size_t from,
                                           Folder& folder) {
  std::vector<std::string> plain;  // the words that are not options, in order
  for (std::size_t j = from; j < words.size(); ++j) {
    const std::string& word = words[j];
    const bool folderOption = word == "--prefix" || word == "-C" || word == "--dir" || word == "--cwd";
    if (folderOption && j + 1 < words.size()) {
      folder = pathIn(folder, words[++j]);
    } else if (word.starts_with("--prefix=") || word.starts_with("--dir=") || word.starts_with("--cwd=")) {
      folder = pathIn(folder, word.substr(word.find('=') + 1));
    } else if (word == "--") {
      break;
    } else if (!word.starts_with('-')) {
      plain.push_back(word);
      if (plain.size() == 2) break;
    }
  }
  if (plain.empty()) return {};
  const std::string& verb = plain[0];
  std::vector<std::string> names;
  if (verb == "run" || verb == "run-script" || (tool == "npm" && (verb == "rum" || verb == "urn"))) {
    if (plain.size() > 1) names.push_back(plain[1]);
  } else if (tool != "npm") {
    names.push_back(verb);  // yarn and pnpm run a script named as their command
  } else if (verb == "test" || verb == "t" || verb == "tst") {
    names.push_back("test");
  } else if (verb == "start" || verb == "stop") {
    names.push_back(verb);
  } else if (verb == "restart") {
    names = {"restart", "stop", "start"};
  }
  std::vector<std::string> withHooks;
  for (const std::string& name : names) {
    withHooks.insert(withHooks.end(), {"pre" + name, name, "post" + name});
  }
  return withHooks;
}

// Collects the build scripts of command lines, following the scripts of
// package.json a package manager runs into what they run in turn.
class ScriptFinder {
 public:
  explicit ScriptFinder(const BaseFileReader& readBase) : readBase_(readBase) {}

  void addLine(std::string_view line, const Folder& start, int depth) {
    std::vector<Folder> outer;  // where each subshell started
    Folder folder = start;
    for (const Words& words : simpleCommands(line)) {
      if (words.size() == 1 && words[0] == "(") {
        outer.push_back(folder);
      } else if (words.size() == 1 && words[0] == ")") {
        if (!outer.empty()) {
          folder = outer.back();
          outer.pop_back();
        }
      } else {
        addCommand(words, folder, depth);
      }
    }
  }

  std::vector<std::string> patterns() {
    std::sort(patterns_.begin(), patterns_.end());
    patterns_.erase(std::unique(patterns_.begin(), patterns_.end()), patterns_.end());
    return patterns_;
  }

 private:
  // How deep scripts that run other scripts are followed.
  static constexpr int kMaxDepth = 8;

  void add(const std::optional<std::string>& file) {
    if (file) patterns_.push_back(*file);
  }

  // One simple command run in `folder`, which a `cd` moves.
  void addCommand(const Words& words, Folder& folder, int depth) {
    std::size_t i = 0;
    while (i < words.size() && isAssignment(words[i])) ++i;
    while (i < words.size() && isWrapper(words[i])) {
      for (++i; i < words.size() && (isAssignment(words[i]) || words[i].starts_with('-')); ++i) {
      }
    }
    if (i == words.size()) return;
    const std::string& program = words[i];
    const std::string tool = baseName(program);
    if (program == "cd" || program == "pushd") {
      std::size_t j = i + 1;
      while (j < words.size() && words[j].starts_with('-') && words[j] != "-") ++j;
      // `cd` alone goes home, `cd -` back: nowhere a file can be tied to.
      folder = j < words.size() ? pathIn(folder, words[j]) : std::nullopt;
      return;
    }
    if (program == "popd") {
      folder.reset();
      return;
    }
    // A program run by its path is itself the script: ./build.sh.
    if (program.find('/') != std::string::npos) add(namedFile(folder, program));
    if (const auto* scripts = toolScripts(tool)) patterns_.insert(patterns_.end(), scripts->begin(), scripts->end());
    if (tool == "make" || tool == "gmake") {
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if ((words[j] == "-f" || words[j] == "--file" || words[j] == "--makefile") && j + 1 < words.size()) {
          add(namedFile(folder, words[++j]));
        } else if (words[j].starts_with("-f") && words[j].size() > 2) {
          add(namedFile(folder, words[j].substr(2)));
        } else if (words[j].starts_with("--file=") || words[j].starts_with("--makefile=")) {
          add(namedFile(folder, words[j].substr(words[j].find('=') + 1)));
        }
      }
    }
    if (tool == "npm" || tool == "yarn" || tool == "pnpm") {
      Folder package = folder;
      const std::vector<std::string> names = packageScriptsRun(tool, words, i + 1, package);
      addPackageScripts(package, names, depth);
    }
    if (isInterpreter(tool)) {
      // The first word that is not an option is the script; -c (and python's
      // -m, node's, perl's and ruby's -e) run code given on the line, which no
      // file defines. A shell's -e is errexit.
      const bool shell = tool == "sh" || tool == "bash" || tool == "dash" || tool == "zsh" || tool == "ksh";
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if (words[j] == "-c" || words[j] == "-m" || (words[j] == "-e" && !shell)) return;
        if (words[j].starts_with('-')) continue;
        add(namedFile(folder, words[j]));
        return;
      }
    }
  }

  // The base's package.json in `folder`: what the scripts `names` run, in
  // that folder, as the package manager runs them.
  void addPackageScripts(const Folder& folder, const std::vector<std::string>& names, int depth) {
    if (!readBase_ || !folder || names.empty() || depth >= kMaxDepth) return;
    const std::string file = folder->empty() ? "package.json" : *folder + "/package.json";
    const std::optional<std::string> text = readBase_(file);
    if (!text) return;
    boost::system::error_code ec;
    const boost::json::value package = boost::json::parse(*text, ec);
    if (ec || !package.is_object()) return;
    const boost::json::value* scripts = package.as_object().if_contains("scripts");
    if (scripts == nullptr || !scripts->is_object()) return;
    for (const std::string& name : names) {
      const boost::json::value* script = scripts->as_object().if_contains(name);
      if (script == nullptr || !script->is_string()) continue;
      if (!followed_.insert(file + '\n' + name).second) continue;  // a script that runs itself
      addLine(std::string_view(script->as_string()), folder, depth + 1);
    }
  }

  const BaseFileReader& readBase_;
  std::vector<std::string> patterns_;
  std::set<std::string> followed_;
};

bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Whether `text` has `word` with no name character either side.
bool namesWord(std::string_view text, std::string_view word) {
  if (word.empty()) return false;
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool before = at == 0 || !isNameChar(text[at - 1]);
    const std::size_t end = at + word.size();
    const bool after = end == text.size() || !isNameChar(text[end]);
    if (before && after) return true;
  }
  return false;
}

// Whether `texts` name `path`: its path, or its file name with or without its
// extension (a Makefile lists util.o for util.c).
bool names(const std::vector<std::string>& texts, const std::string& path) {
  const std::string file = baseName(path);
  const std::size_t dot = file.find('.');
  const std::string stem = dot == std::string::npos || dot == 0 ? std::string() : file.substr(0, dot);
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& text) {
    return namesWord(text, path) || namesWord(text, file) || (!stem.empty() && namesWord(text, stem));
  });
}

git::TreePtr treeOf(git_repository* repo, const std::string& commit) {
  git::CommitPtr c = git::lookupCommit(repo, git::oidFromHex(commit));
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, c.get()), "cannot read the tree of " + commit);
  return git::TreePtr(rawTree);
}

// The text of the file at `path` in `tree`; nullopt when it has none there.
std::optional<std::string> blobText(git_repository* repo, git_tree* tree, const std::string& path) {
  git_tree_entry* rawEntry = nullptr;
  const int rc = git_tree_entry_bypath(&rawEntry, tree, path.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  git::check(rc, "cannot look up " + path);
  std::unique_ptr<git_tree_entry, git::FreeWith<git_tree_entry_free>> entry(rawEntry);
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::nullopt;
  git_blob* rawBlob = nullptr;
  git::check(git_blob_lookup(&rawBlob, repo, git_tree_entry_id(entry.get())), "cannot read " + path);
  git::BlobPtr blob(rawBlob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<std::size_t>(git_blob_rawsize(blob.get())));
}

// The text of each of `paths` that `commit` has.
std::vector<std::string> textsAt(git_repository* repo, const std::string& commit,
                                 const std::vector<std::string>& paths) {
  git::TreePtr tree = treeOf(repo, commit);
  std::vector<std::string> texts;
  for (const std::string& path : paths) {
    if (std::optional<std::string> text = blobText(repo, tree.get(), path)) texts.push_back(std::move(*text));
  }
  return texts;
}

}  // namespace

std::vector<std::string> buildScriptPatterns(std::string_view command, const BaseFileReader& readBase) {
  ScriptFinder finder(readBase);
  finder.addLine(command, std::string(), 0);
  return finder.patterns();
}

std::vector<std::string> buildScriptPatterns(std::string_view command, const std::filesystem::path& repo,
                                             const std::string& baseCommit) {
  git::RepositoryPtr repository = git::openRepository(repo);
  git::TreePtr tree = treeOf(repository.get(), baseCommit);
  return buildScriptPatterns(command,
                             [&](const std::string& path) { return blobText(repository.get(), tree.get(), path); });
}

std::vector<std::string> filesTheScriptChangeFollows(const std::filesystem::path& repo, const std::string& baseCommit,
                                                     const std::string& commit,
                                                     const std::vector<merge::FileChange>& changes,
                                                     const std::vector<std::string>& scripts) {
  std::set<std::string> added, removed;
  const std::set<std::string> isScript(scripts.begin(), scripts.end());
  for (const merge::FileChange& change : changes) {
    if (change.status == "added" || change.status == "renamed") added.insert(change.path);
    if (change.status == "deleted") removed.insert(change.path);
    if (change.status == "renamed") removed.insert(change.oldPath);
  }
  git::RepositoryPtr repository = git::openRepository(repo);
  const std::vector<std::string> ours = textsAt(repository.get(), commit, scripts);
  const std::vector<std::string> base = textsAt(repository.get(), baseCommit, scripts);
  std::set<std::string> follows;
  for (const std::string& path : added) {
    if (!isScript.contains(path) && names(ours, path) && !names(base, path)) follows.insert(path);
  }
  for (const std::string& path : removed) {
    if (!isScript.contains(path) && names(base, path) && !names(ours, path)) follows.insert(path);
  }
  return {follows.begin(), follows.end()};
}

}  // namespace hydra::core::checks
