#pragma once
// The checkpoint storage benchmark's plan (checkpoint.write and checkpoint.read, checkpoint.cpp): how a
// checkpoint of `total` bytes is cut into the shards the ranks of one GPU count write and read, in a file
// per rank or at offsets of one shared file; what O_DIRECT's alignment asks of the sizes; how much room
// a directory needs; the files' names. Pure: tests/unit/harness/benchmarks/checkpoint/test_checkpoint_plan.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class CkptLayout { file_per_rank, shared_file };
enum class CkptIo { buffered, direct };
std::string_view ckpt_layout_name(CkptLayout l);  // "file_per_rank", "shared_file"
std::string_view ckpt_io_name(CkptIo io);         // "buffered", "direct"

// O_DIRECT's alignment of offsets, sizes and buffers: 4 KiB covers the logical block size of every disk
// and parallel file system in use (512 B or 4 KiB).
inline constexpr std::uint64_t kCkptAlignment = 4096;

struct CkptShard {
  std::uint64_t offset = 0;  // in its file (0 for a file per rank)
  std::uint64_t bytes = 0;
};

// Rank `index` of `ranks`' shard of a checkpoint of `total` bytes: equal shards of whole alignment
// units, the last rank taking what the division leaves. ckpt_size_problem must have passed.
CkptShard ckpt_shard(std::uint64_t total, int ranks, int index, CkptLayout layout);

// Why `total` cannot be cut for up to `max_ranks` ranks (nullopt when it can): zero, or too small to give
// each rank one alignment unit, or not a whole number of alignment units (O_DIRECT).
std::optional<std::string> ckpt_size_problem(std::uint64_t total, int max_ranks);

// The room a directory needs: one checkpoint at a time (each point removes its files), plus 5% for the
// file system's own blocks.
std::uint64_t ckpt_space_needed(std::uint64_t total);
// Why `free` bytes of `dir` are not enough (nullopt when they are).
std::optional<std::string> ckpt_space_problem(const std::string& dir, std::uint64_t free_bytes, std::uint64_t total);

// The file a rank writes: "gpuscale-ckpt-<run>-r<rank>.bin", or its group's shared
// "gpuscale-ckpt-<run>-g<rank>.bin", `rank` then the group's first world rank (groups of one GPU count
// measure at once, each with its own file).
// `run_id` is the run's own id (hex): no part of the name comes from the command line or a file.
std::string ckpt_file_name(std::string_view run_id, CkptLayout layout, int rank);

// Whether ranks on different hosts may share one file in --ckpt-dir. A file system local to a node (its
// own disk or memory: ext4, xfs, btrfs, tmpfs, overlay, ...) cannot be: each host would write a file of
// its own. Any other type (nfs, lustre, gpfs, beegfs, ceph, a FUSE client, or one not known) may be.
bool ckpt_node_local_fs(std::string_view fs_type);
// A file system's identity as the ranks exchange it (a double, exact below 2^53): its type and source
// (mountinfo's mount source) hashed.
double ckpt_fs_key(std::string_view fs_type, std::string_view source);

// Where one rank of a group sees --ckpt-dir.
struct CkptPlace {
  int world_rank = 0;
  std::string host;
  double fs_key = 0;
};
struct CkptSharedVerdict {
  enum class Kind { ok, skip, refuse } kind = Kind::ok;
  std::string why;
};
// Whether a group may write one shared file, `fs_type` being its file system as this rank sees it:
// skipped when that is local to a node and the ranks span hosts (a shared file cannot be measured there:
// a fact of the storage, not a failure), refused when two ranks see --ckpt-dir on different file systems.
CkptSharedVerdict ckpt_shared_verdict(const std::vector<CkptPlace>& ranks, std::string_view fs_type);

// Whether a point of `io` runs on a group whose ranks' O_DIRECT probes (fs_probe.h's direct_io_problem)
// said `problems`, one per rank ("" where it works): a direct point is skipped, with the first reason,
// when any rank's file system refuses O_DIRECT (tmpfs, overlay: a fact of the storage, not a failure);
// nullopt: it runs. Buffered points always run.
std::optional<std::string> ckpt_direct_skip(CkptIo io, const std::vector<std::string>& problems);

}  // namespace gpuscale
