#include "harness/benchmarks/checkpoint/checkpoint_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void stamp(unsigned char* chunk, std::uint64_t index) { std::memcpy(chunk, &index, sizeof index); }

std::string failed(const char* what, const std::string& path) {
  return fmt::format("{} {}: {}", what, terminal_quote(path), std::strerror(errno));
}

}  // namespace

void CkptBuffer::Free::operator()(unsigned char* p) const { std::free(p); }

CkptBuffer::CkptBuffer(std::uint64_t bytes, std::uint64_t seed) : size_(bytes) {
  void* p = nullptr;
  const auto rounded = (std::max<std::uint64_t>(bytes, 1) + kCkptAlignment - 1) / kCkptAlignment * kCkptAlignment;
  if (posix_memalign(&p, kCkptAlignment, rounded) != 0) throw Error(fmt::format("cannot allocate {} bytes", rounded));
  data_.reset(static_cast<unsigned char*>(p));
  std::mt19937_64 gen(seed);
  for (std::uint64_t i = 0; i + 8 <= rounded; i += 8) {
    const std::uint64_t v = gen();
    std::memcpy(data_.get() + i, &v, 8);
  }
}

CkptFile::CkptFile(const std::string& path, bool write, bool truncate, CkptIo io) : path_(path) {
  int flags = write ? (O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0)) : O_RDONLY;
  if (io == CkptIo::direct) flags |= O_DIRECT;
  fd_ = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    if (io == CkptIo::direct && errno == EINVAL)
      throw Error(fmt::format("{}: the file system refuses O_DIRECT", terminal_quote(path)));
    throw Error(failed("cannot open", path));
  }
}

CkptFile::~CkptFile() {
  if (fd_ >= 0) ::close(fd_);
}

void fill_staged_shard(ShardStaging& staging, std::uint64_t bytes, CkptBuffer& source) {
  for (std::uint64_t done = 0, chunk = 0; done < bytes; ++chunk) {
    const std::uint64_t n = std::min<std::uint64_t>(source.size(), bytes - done);
    stamp(source.data(), chunk);
    std::memcpy(staging.host(), source.data(), n);
    staging.from_host(done, n);
    done += n;
  }
}

double write_shard(const std::string& path, CkptIo io, bool truncate, std::uint64_t offset, std::uint64_t bytes,
                   CkptBuffer& source, ShardStaging* staging) {
  const auto t0 = std::chrono::steady_clock::now();
  CkptFile f(path, true, truncate, io);
  for (std::uint64_t done = 0, chunk = 0; done < bytes; ++chunk) {
    const std::uint64_t n = std::min<std::uint64_t>(source.size(), bytes - done);
    unsigned char* data = source.data();
    if (staging) {
      staging->to_host(done, n);  // the device's chunk, already stamped by fill_staged_shard
      data = staging->host();
    } else {
      stamp(data, chunk);
    }
    for (std::uint64_t at = 0; at < n;) {
      const auto w = ::pwrite(f.fd(), data + at, n - at, static_cast<off_t>(offset + done + at));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw Error(failed("cannot write", path));
      at += static_cast<std::uint64_t>(w);
    }
    done += n;
  }
  if (::fsync(f.fd()) != 0) throw Error(failed("cannot fsync", path));
  return since(t0);
}

double read_shard(const std::string& path, CkptIo io, std::uint64_t offset, std::uint64_t bytes, CkptBuffer& into,
                  const CkptBuffer* source, std::uint64_t* wrong, ShardStaging* staging) {
  const auto t0 = std::chrono::steady_clock::now();
  CkptFile f(path, false, false, io);
  unsigned char* data = staging ? staging->host() : into.data();
  for (std::uint64_t done = 0, chunk = 0; done < bytes; ++chunk) {
    const std::uint64_t n = std::min<std::uint64_t>(into.size(), bytes - done);
    for (std::uint64_t at = 0; at < n;) {
      const auto r = ::pread(f.fd(), data + at, n - at, static_cast<off_t>(offset + done + at));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(failed("cannot read", path));
      if (r == 0) throw Error(fmt::format("{} ended {} bytes into a shard of {}", terminal_quote(path), done + at, bytes));
      at += static_cast<std::uint64_t>(r);
    }
    if (staging) staging->from_host(done, n);  // into the device's shard
    done += n;
    if (source && wrong) {  // checked after the timing: only the untimed check pass gives a source
      std::uint64_t index = 0;
      std::memcpy(&index, into.data(), sizeof index);
      if (index != chunk || std::memcmp(into.data() + 8, source->data() + 8, n - 8) != 0) ++*wrong;
    }
  }
  return since(t0);
}

std::string drop_cached(const std::string& path, std::uint64_t offset, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed("cannot open", path);
  const int rc = ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes), POSIX_FADV_DONTNEED);
  ::close(fd);
  return rc == 0 ? "" : fmt::format("posix_fadvise(DONTNEED) on {}: {}", terminal_quote(path), std::strerror(rc));
}

}  // namespace gpuscale
