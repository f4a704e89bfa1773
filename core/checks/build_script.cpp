#include "core/checks/build_script.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/checks/protected_paths.h"
#include "core/git/git.h"

namespace hydra::core::checks {

namespace {

using Words = std::vector<std::string>;

// The simple commands of a shell line, as words with their quotes taken off.
// Not a shell: no expansion, no here-documents; enough to find what runs.
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
    } else if (c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')') {
      endWord();
      if (!commands.back().empty()) commands.emplace_back();
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

// `word` as an anchored glob for the file it names in the repository, when it
// names one plainly: relative, inside it, without anything a shell expands.
std::optional<std::string> namedFile(std::string word) {
  while (word.starts_with("./")) word.erase(0, 2);
  if (word.empty() || word.starts_with('/') || word.starts_with('-') ||
      word.find_first_of("*?[]$~{}`") != std::string::npos || !protectedPatternProblem(word).empty()) {
    return std::nullopt;
  }
  return "/" + word;
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

void addScriptsOf(const Words& words, std::vector<std::string>& patterns) {
  std::size_t i = 0;
  while (i < words.size() && isAssignment(words[i])) ++i;
  while (i < words.size() && isWrapper(words[i])) {
    for (++i; i < words.size() && (isAssignment(words[i]) || words[i].starts_with('-')); ++i) {
    }
  }
  if (i == words.size()) return;
  const std::string& program = words[i];
  const std::string tool = baseName(program);
  // A program run by its path is itself the script: ./build.sh.
  if (program.find('/') != std::string::npos) {
    if (auto file = namedFile(program)) patterns.push_back(*file);
  }
  if (const auto* scripts = toolScripts(tool)) patterns.insert(patterns.end(), scripts->begin(), scripts->end());
  if (tool == "make" || tool == "gmake") {
    for (std::size_t j = i + 1; j < words.size(); ++j) {
      std::optional<std::string> file;
      if ((words[j] == "-f" || words[j] == "--file" || words[j] == "--makefile") && j + 1 < words.size()) {
        file = namedFile(words[++j]);
      } else if (words[j].starts_with("-f") && words[j].size() > 2) {
        file = namedFile(words[j].substr(2));
      } else if (words[j].starts_with("--file=") || words[j].starts_with("--makefile=")) {
        file = namedFile(words[j].substr(words[j].find('=') + 1));
      }
      if (file) patterns.push_back(*file);
    }
  }
  if (isInterpreter(tool)) {
    // The first word that is not an option is the script; -c (and python's
    // -m, node's, perl's and ruby's -e) run code given on the line, which no
    // file defines. A shell's -e is errexit.
    const bool shell = tool == "sh" || tool == "bash" || tool == "dash" || tool == "zsh" || tool == "ksh";
    for (std::size_t j = i + 1; j < words.size(); ++j) {
      if (words[j] == "-c" || words[j] == "-m" || (words[j] == "-e" && !shell)) return;
      if (words[j].starts_with('-')) continue;
      if (auto file = namedFile(words[j])) patterns.push_back(*file);
      return;
    }
  }
}

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

// The text of each of `paths` that `commit` has.
std::vector<std::string> textsAt(git_repository* repo, const std::string& commit,
                                 const std::vector<std::string>& paths) {
  git::CommitPtr c = git::lookupCommit(repo, git::oidFromHex(commit));
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, c.get()), "cannot read the tree of " + commit);
  git::TreePtr tree(rawTree);
  std::vector<std::string> texts;
  for (const std::string& path : paths) {
    git_tree_entry* rawEntry = nullptr;
    const int rc = git_tree_entry_bypath(&rawEntry, tree.get(), path.c_str());
    if (rc == GIT_ENOTFOUND) continue;
    git::check(rc, "cannot look up " + path + " in " + commit);
    std::unique_ptr<git_tree_entry, git::FreeWith<git_tree_entry_free>> entry(rawEntry);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) continue;
    git_blob* rawBlob = nullptr;
    git::check(git_blob_lookup(&rawBlob, repo, git_tree_entry_id(entry.get())), "cannot read " + path);
    git::BlobPtr blob(rawBlob);
    texts.emplace_back(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                       static_cast<std::size_t>(git_blob_rawsize(blob.get())));
  }
  return texts;
}

}  // namespace

std::vector<std::string> buildScriptPatterns(std::string_view command) {
  std::vector<std::string> patterns;
  for (const Words& words : simpleCommands(command)) addScriptsOf(words, patterns);
  std::sort(patterns.begin(), patterns.end());
  patterns.erase(std::unique(patterns.begin(), patterns.end()), patterns.end());
  return patterns;
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
