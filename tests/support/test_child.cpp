// hydra_test_child: a purpose-built child program for the process tests. It
// does exactly what its flags say, in a fixed order, so that a test can make a
// real child misbehave in one precise way.
//
//   --ignore-sigterm          ignore SIGTERM (set before anything else)
//   --spawn-grandchild        fork a grandchild that ignores SIGTERM and sleeps
//                             forever, keeping stdout and stderr open
//   --grandchild-setsid       the grandchild also leaves the process group
//   --pid-file PATH           where the grandchild's pid is written
//   --read-stdin              read stdin to EOF; print "stdin bytes: N devnull: yes|no"
//   --print-cwd               print the working directory
//   --echo-env NAME           print "NAME=value", or "NAME is unset"
//   --list-fds                print "fds: 0 1 2 ..." (the descriptors it inherited)
//   --print N                 print "line 1" .. "line N"
//   --print-bytes N           print N bytes fast, as lines of 1023 'x' and '\n'
//   --long-line N             print one line of N bytes ('0'..'9' repeating)
//   --invalid-utf8            print "bad:\xFF\xFE ok"
//   --stderr TEXT             print TEXT to stderr
//   --ready                   print "ready" (after all of the above)
//   --partial TEXT            print TEXT with no newline
//   --sleep SECONDS           sleep (fractions allowed)
//   --raise SIGNAL            kill itself with SIGNAL (a number)
//   --exit CODE               exit with CODE (default 0)

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
  bool ignoreSigterm = false;
  bool spawnGrandchild = false;
  bool grandchildSetsid = false;
  std::string pidFile;
  bool readStdin = false;
  bool printCwd = false;
  std::vector<std::string> echoEnv;
  bool listFds = false;
  long print = 0;
  long long printBytes = 0;
  long long longLine = 0;
  bool invalidUtf8 = false;
  std::vector<std::string> stderrText;
  std::string partial;
  bool ready = false;
  double sleepSeconds = 0;
  int raiseSignal = 0;
  int exitCode = 0;
};

[[noreturn]] void usage(const char* message, const char* arg) {
  std::fprintf(stderr, "hydra_test_child: %s%s\n", message, arg);
  std::exit(64);
}

struct Flag {
  std::string_view name;
  bool takesValue;
  void (*apply)(Options&, const char* value);
};

const Flag kFlags[] = {
    {"--ignore-sigterm", false, [](Options& o, const char*) { o.ignoreSigterm = true; }},
    {"--spawn-grandchild", false, [](Options& o, const char*) { o.spawnGrandchild = true; }},
    {"--grandchild-setsid", false, [](Options& o, const char*) { o.grandchildSetsid = true; }},
    {"--pid-file", true, [](Options& o, const char* v) { o.pidFile = v; }},
    {"--read-stdin", false, [](Options& o, const char*) { o.readStdin = true; }},
    {"--print-cwd", false, [](Options& o, const char*) { o.printCwd = true; }},
    {"--echo-env", true, [](Options& o, const char* v) { o.echoEnv.emplace_back(v); }},
    {"--list-fds", false, [](Options& o, const char*) { o.listFds = true; }},
    {"--print", true, [](Options& o, const char* v) { o.print = std::atol(v); }},
    {"--print-bytes", true, [](Options& o, const char* v) { o.printBytes = std::atoll(v); }},
    {"--long-line", true, [](Options& o, const char* v) { o.longLine = std::atoll(v); }},
    {"--invalid-utf8", false, [](Options& o, const char*) { o.invalidUtf8 = true; }},
    {"--stderr", true, [](Options& o, const char* v) { o.stderrText.emplace_back(v); }},
    {"--ready", false, [](Options& o, const char*) { o.ready = true; }},
    {"--partial", true, [](Options& o, const char* v) { o.partial = v; }},
    {"--sleep", true, [](Options& o, const char* v) { o.sleepSeconds = std::atof(v); }},
    {"--raise", true, [](Options& o, const char* v) { o.raiseSignal = std::atoi(v); }},
    {"--exit", true, [](Options& o, const char* v) { o.exitCode = std::atoi(v); }},
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const Flag* flag = std::find_if(std::begin(kFlags), std::end(kFlags),
                                    [&](const Flag& f) { return f.name == argv[i]; });
    if (flag == std::end(kFlags)) usage("unknown flag ", argv[i]);
    if (flag->takesValue && i + 1 >= argc) usage("missing value for ", argv[i]);
    flag->apply(o, flag->takesValue ? argv[++i] : nullptr);
  }
  return o;
}

void writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::_Exit(70);  // the reader went away: nothing sensible left to do
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void say(const std::string& line) { writeAll(STDOUT_FILENO, line + "\n"); }

void sleepFor(double seconds) {
  timespec left{
      static_cast<time_t>(seconds),
      static_cast<long>((seconds - static_cast<double>(static_cast<time_t>(seconds))) * 1e9)};
  while (::nanosleep(&left, &left) == -1 && errno == EINTR) {
  }
}

// The pid is written to a temporary file and renamed, so a reader never sees
// half of it.
void writePidFile(const std::string& path, pid_t pid) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) usage("cannot write ", tmp.c_str());
  writeAll(fd, std::to_string(pid));
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) usage("cannot rename to ", path.c_str());
}

// The grandchild tells its parent through a pipe once it ignores SIGTERM, so
// that nobody can signal it before it is ready to shrug the signal off.
void spawnGrandchild(const Options& o) {
  int ready[2];
  if (::pipe(ready) != 0) usage("pipe failed", "");
  const pid_t pid = ::fork();
  if (pid < 0) usage("fork failed", "");
  if (pid == 0) {
    ::close(ready[0]);
    std::signal(SIGTERM, SIG_IGN);
    if (o.grandchildSetsid) ::setsid();
    writeAll(ready[1], "!");
    ::close(ready[1]);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  while (::read(ready[0], &byte, 1) == -1 && errno == EINTR) {
  }
  ::close(ready[0]);
  if (!o.pidFile.empty()) writePidFile(o.pidFile, pid);
}

void readStdin() {
  long long total = 0;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n > 0)
      total += n;
    else if (n == 0 || errno != EINTR)
      break;
  }
  struct stat in {};
  struct stat null {};
  const bool devnull = ::fstat(STDIN_FILENO, &in) == 0 && ::stat("/dev/null", &null) == 0 &&
                       S_ISCHR(in.st_mode) && in.st_rdev == null.st_rdev;
  say("stdin bytes: " + std::to_string(total) + " devnull: " + (devnull ? "yes" : "no"));
}

void printCwd() {
  char buffer[4096];
  say(::getcwd(buffer, sizeof buffer) != nullptr ? buffer : "getcwd failed");
}

void echoEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  say(value != nullptr ? name + "=" + value : name + " is unset");
}

void listFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) usage("cannot list /proc/self/fd", "");
  std::vector<int> fds;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int fd = std::atoi(entry->d_name);
    if (fd != ::dirfd(dir)) fds.push_back(fd);
  }
  ::closedir(dir);
  std::string line = "fds:";
  for (int fd : fds) line += " " + std::to_string(fd);
  say(line);
}

void printBytes(long long total) {
  std::string block;
  for (int i = 0; i < 64; ++i) block += std::string(1023, 'x') + "\n";  // 64 KiB
  while (total >= static_cast<long long>(block.size())) {
    writeAll(STDOUT_FILENO, block);
    total -= static_cast<long long>(block.size());
  }
  writeAll(STDOUT_FILENO, std::string_view(block).substr(0, static_cast<std::size_t>(total)));
}

void longLine(long long length) {
  std::string chunk;
  for (int i = 0; i < 65536; ++i) chunk += static_cast<char>('0' + i % 10);
  long long written = 0;
  while (written < length) {
    // Keep the digit pattern continuous across chunks: start where we left off.
    const std::size_t offset = static_cast<std::size_t>(written % 10);
    const auto take = static_cast<std::size_t>(
        std::min<long long>(length - written, static_cast<long long>(chunk.size() - offset)));
    writeAll(STDOUT_FILENO, std::string_view(chunk).substr(offset, take));
    written += static_cast<long long>(take);
  }
  writeAll(STDOUT_FILENO, "\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.ignoreSigterm) std::signal(SIGTERM, SIG_IGN);
  if (o.spawnGrandchild) spawnGrandchild(o);
  if (o.readStdin) readStdin();
  if (o.printCwd) printCwd();
  for (const std::string& name : o.echoEnv) echoEnv(name);
  if (o.listFds) listFds();
  for (long i = 1; i <= o.print; ++i) say("line " + std::to_string(i));
  if (o.printBytes > 0) printBytes(o.printBytes);
  if (o.longLine > 0) longLine(o.longLine);
  if (o.invalidUtf8) say("bad:\xFF\xFE ok");
  for (const std::string& text : o.stderrText) writeAll(STDERR_FILENO, text + "\n");
  if (o.ready) say("ready");
  if (!o.partial.empty()) writeAll(STDOUT_FILENO, o.partial);
  if (o.sleepSeconds > 0) sleepFor(o.sleepSeconds);
  if (o.raiseSignal != 0) {
    std::signal(o.raiseSignal, SIG_DFL);
    ::raise(o.raiseSignal);
  }
  return o.exitCode;
}
