#include "harness/benchmarks/checkpoint/fs_probe.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/term_text.h"

namespace gpuscale {
namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && line[at] == ' ') ++at;
    const auto end = line.find(' ', at);
    if (at < line.size()) out.emplace_back(line.substr(at, end == std::string_view::npos ? line.size() - at : end - at));
    if (end == std::string_view::npos) break;
    at = end;
  }
  return out;
}

// mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash).
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) && std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool under(const std::string& path, const std::string& mount) {
  if (mount == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, mount.size(), mount) == 0 && (path.size() == mount.size() || path[mount.size()] == '/');
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> out;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const auto w = words(text.substr(at, end - at));
    at = end + 1;
    // id parent major:minor root mount-point options [optional fields...] - fstype source super-options
    std::size_t dash = 6;
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (w.size() < 6 || dash + 3 > w.size()) continue;
    MountEntry m;
    m.mount_point = unescape(w[4]);
    m.options = w[5] + (dash + 3 < w.size() ? "," + w[dash + 3] : std::string());
    m.fs_type = w[dash + 1];
    m.source = unescape(w[dash + 2]);
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<MountEntry> mount_of(const std::vector<MountEntry>& mounts, const std::string& path) {
  std::optional<MountEntry> best;
  for (const auto& m : mounts)
    if (under(path, m.mount_point) && (!best || m.mount_point.size() >= best->mount_point.size())) best = m;
  return best;
}

FsInfo probe_fs(const std::string& dir) {
  FsInfo f;
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(dir, ec);
  if (ec) {
    f.problem = fmt::format("{}: {}", terminal_quote(dir), ec.message());
    return f;
  }
  f.path = canonical.string();
  if (!std::filesystem::is_directory(canonical, ec)) {
    f.problem = fmt::format("{} is not a directory", terminal_quote(f.path));
    return f;
  }
  if (::access(f.path.c_str(), W_OK | X_OK) != 0) {
    f.problem = fmt::format("{} is not writable: {}", terminal_quote(f.path), std::strerror(errno));
    return f;
  }
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  f.mount = mount_of(parse_mountinfo(text.str()), f.path);
  f.direct_problem = direct_io_problem(f.path, f.mount ? f.mount->fs_type : "", open_file);
  struct statvfs s {};
  // A file system that counts no blocks (f_blocks 0: ramfs, which grows until memory runs out, and some
  // FUSE ones) says nothing of its free space, so there is no free figure to hold the checkpoint against.
  if (::statvfs(f.path.c_str(), &s) == 0 && s.f_blocks > 0) {
    f.free_bytes = static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
    f.total_bytes = static_cast<std::uint64_t>(s.f_blocks) * s.f_frsize;
  }
  return f;
}

int open_file(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }

std::string direct_io_problem(const std::string& dir, const std::string& fs_type, OpenFile open_file) {
  const std::string probe = fmt::format("{}/.gpuscale-direct-probe-{}", dir, ::getpid());
  const int fd = open_file(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT, 0600);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
    return "";
  }
  const int err = errno;
  ::unlink(probe.c_str());  // a file system may create the file before it refuses the flag
  return fmt::format("O_DIRECT is refused by {} at {} ({})", fs_type.empty() ? "its file system" : fs_type,
                     terminal_quote(dir), std::strerror(err));
}

}  // namespace gpuscale
