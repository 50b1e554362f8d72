#pragma once
// The checkpoint benchmark's file I/O, the thin seam over POSIX (harness/benchmarks/checkpoint/checkpoint_plan.h decides the
// sizes): a shard written and read as a checkpoint is, in chunks from one aligned buffer, buffered or
// with O_DIRECT, fsync counted in the write; its pages dropped from the page cache before a timed read;
// its content checked. The source is random (from the run's seed and the rank) with each chunk's index
// stamped into its first 8 bytes, so a chunk read from the wrong place is caught too.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "harness/benchmarks/checkpoint/checkpoint_plan.h"
#include "kernels/device.h"

namespace gpuscale {

inline constexpr std::uint64_t kCkptChunk = 16ULL << 20;  // bytes per write or read call

class CkptBuffer {
 public:
  CkptBuffer(std::uint64_t bytes, std::uint64_t seed);  // aligned for O_DIRECT, filled from `seed`
  unsigned char* data() { return data_.get(); }
  const unsigned char* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(unsigned char* p) const;
  };
  std::unique_ptr<unsigned char, Free> data_;
  std::uint64_t size_ = 0;
};

// A file descriptor closed when it goes.
class CkptFile {
 public:
  // Throws gpuscale::Error naming the path and the reason (O_DIRECT refused by the file system included).
  CkptFile(const std::string& path, bool write, bool truncate, CkptIo io);
  ~CkptFile();
  CkptFile(const CkptFile&) = delete;
  CkptFile& operator=(const CkptFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Fills a device shard with what write_shard would write from `source` (each chunk stamped), untimed.
void fill_staged_shard(ShardStaging& staging, std::uint64_t bytes, CkptBuffer& source);
// Writes the shard [offset, offset + bytes) from `source` (each chunk stamped with its index), or with
// `staging` from device memory (each chunk copied to its host buffer first), and fsyncs it; returns the
// seconds from open to the end of fsync. Throws gpuscale::Error on an I/O error.
double write_shard(const std::string& path, CkptIo io, bool truncate, std::uint64_t offset, std::uint64_t bytes,
                   CkptBuffer& source, ShardStaging* staging = nullptr);
// Reads the shard back into `into` (the same size as the source), or with `staging` through its host
// buffer into device memory; returns the seconds from open to the last byte. With `source`, checks every
// chunk and counts the wrong ones in *wrong (the untimed check, always into `into`). Throws on an I/O
// error or a short file.
double read_shard(const std::string& path, CkptIo io, std::uint64_t offset, std::uint64_t bytes, CkptBuffer& into,
                  const CkptBuffer* source = nullptr, std::uint64_t* wrong = nullptr, ShardStaging* staging = nullptr);
// Drops the shard's pages from the page cache (posix_fadvise DONTNEED: the pages are clean after fsync,
// and no privilege is needed). "" when done, else why not (a read may then come from memory).
std::string drop_cached(const std::string& path, std::uint64_t offset, std::uint64_t bytes);

}  // namespace gpuscale
