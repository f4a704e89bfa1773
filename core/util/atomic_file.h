#pragma once

// Crash-safe file writes: a record is either wholly old or wholly new, and an
// append-only log never loses a line that append() returned from.

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace hydra::core {

// Replaces `path` with `data` so that a reader (or a crash, or SIGKILL) sees
// either the old content or the new one, never a mix: the data goes to a
// uniquely named temporary file in the same directory, is fsync'ed, renamed over
// `path`, and the directory is fsync'ed so the rename itself is durable.
// An existing target keeps its permission bits; a new one gets 0666 & ~umask.
// Throws std::system_error naming `path`. Whenever it throws before the rename,
// the temporary file is gone and `path` is untouched. (Only if the final
// directory sync fails is the new content already in place when it throws.)
// A process killed mid-write may leave a temporary file named
// `.<name>.tmp-*` next to the target; it is never mistaken for the target.
void writeFileAtomic(const std::filesystem::path& path, std::string_view data);

// The same for `name` (one path component) in the open directory `dirfd`;
// `shown` names the file in errors. No symbolic link is followed: one under
// `name` is replaced, not written through (see core/util/safe_fs.h).
void writeFileAtomicAt(int dirfd, std::string_view name, std::string_view data,
                       const std::filesystem::path& shown);

// True for the names writeFileAtomic gives its temporary files, so directory
// listings can skip what a killed writer left behind.
bool isAtomicTempName(std::string_view filename);

// An append-only file (O_APPEND|O_CREAT|O_NOFOLLOW|O_CLOEXEC), for events.jsonl and agent
// logs. There is no user-space buffer: each append() is handed to the kernel
// before it returns, so a crash of hydra loses nothing already appended; sync()
// also survives a crash of the machine. Not synchronised: one writer at a time
// per object (the kernel keeps separate processes' whole-line appends apart).
class AppendFile {
 public:
  // Opens `path`, creating it (0666 & ~umask) when missing. Throws std::system_error.
  explicit AppendFile(const std::filesystem::path& path);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Appends `text` as whole lines: a newline is added when it does not end with
  // one. Partial writes are continued until everything is written; when the
  // write fails (a full disk), what it wrote of the line is cut off again, so
  // the file never ends in part of a line.
  void append(std::string_view text);
  // Forces the appended data to stable storage (fdatasync).
  void sync();
  // The file's current size in bytes.
  std::uint64_t size() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void close() noexcept;
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace hydra::core
