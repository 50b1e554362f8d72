#pragma once
// What file system a directory is on (the checkpoint benchmark records it beside its rows and refuses a
// directory without room before writing): its mount point, type and options from /proc/self/mountinfo,
// and its free and total bytes from statvfs. parse_mountinfo and mount_of are pure
// (tests/unit/harness/benchmarks/checkpoint/test_checkpoint_plan.cpp); probe_fs is the thin reader.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

struct MountEntry {
  std::string mount_point, fs_type, options, source;  // options: the mount's and the superblock's
};

// The entries of /proc/self/mountinfo text (proc(5)); a line of another shape is skipped. Paths are
// decoded (\040 is a space).
std::vector<MountEntry> parse_mountinfo(std::string_view text);
// The mount holding the absolute, canonical `path`: the last-listed of the longest mount points that are
// a prefix of it (a later mount over the same point hides the earlier).
std::optional<MountEntry> mount_of(const std::vector<MountEntry>& mounts, const std::string& path);

struct FsInfo {
  std::string path;  // canonical
  std::optional<MountEntry> mount;
  std::optional<std::uint64_t> free_bytes, total_bytes;  // for an unprivileged user (f_bavail)
  std::string problem;  // why it cannot be used: missing, not a directory, not writable ("" when usable)
  std::string direct_problem;  // why O_DIRECT cannot be used there (direct_io_problem; "" when it can)
};
FsInfo probe_fs(const std::string& dir);

// Whether O_DIRECT works in `dir` (on a file system of type `fs_type`): a probe file is opened there
// with O_DIRECT, then removed. tmpfs before Linux 6.6 and overlayfs over some lower file systems refuse
// it (EINVAL). "" when it works; otherwise why, naming the file system. `open_file` is ::open (a
// variadic function, hence the wrapper); tests pass one that refuses.
using OpenFile = int (*)(const char* path, int flags, mode_t mode);
int open_file(const char* path, int flags, mode_t mode);
std::string direct_io_problem(const std::string& dir, const std::string& fs_type, OpenFile open_file);

}  // namespace gpuscale
