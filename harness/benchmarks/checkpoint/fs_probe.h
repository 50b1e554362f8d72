#pragma once
// What file system a directory is on (the checkpoint benchmark records it beside its rows and refuses a
// directory without room before writing): its mount point, type and options from /proc/self/mountinfo,
// and its free and total bytes from statvfs. parse_mountinfo and mount_of are pure
// (tests/unit/harness/benchmarks/checkpoint/test_checkpoint_plan.cpp); probe_fs is the thin reader.
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
};
FsInfo probe_fs(const std::string& dir);

}  // namespace gpuscale
