// The checkpoint storage benchmarks (issue 28, docs/capacity.md): every rank of a GPU count writes, or
// reads, its shard of one checkpoint of --ckpt-size bytes in --ckpt-dir, all at once, in a file of its own
// or at its offset of one shared file, through the page cache or with O_DIRECT; fsync is part of a write.
// A rank's figure is its shard over its time; the group's checkpoint time is its slowest rank's
// (`checkpoint_s`, `checkpoint_gb_s`). Every shard is read back and checked. Files are removed at the end
// of each point, a failed one included. Opt-in (group "storage"): it writes to a file system.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/stats.h"
#include "core/units.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/checkpoint/checkpoint_io.h"
#include "harness/benchmarks/checkpoint/fs_probe.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/independent.h"
#include "harness/registry.h"
#include "planning/checkpoint_time.h"

namespace gpuscale {
namespace {

struct CkptPoint {
  CkptLayout layout;
  CkptIo io;
  std::uint64_t total;      // the whole checkpoint at every count (--ckpt-size), or
  std::uint64_t rank_bytes; // each rank's shard (--ckpt-rank-size; 0 when total is given)
  std::uint64_t at(int ranks) const { return rank_bytes ? rank_bytes * static_cast<std::uint64_t>(ranks) : total; }
};

// A rate storage at least reaches per rank, for the plan's estimate and the watchdog (a point lasts
// its bytes over it on any device): a slow shared file system, not a fast NVMe.
constexpr double kSlowStorageBytesPerS = 0.2e9;

std::uint64_t default_bytes(const RunOptions& o) { return o.ckpt_bytes.value_or(o.quick ? (256ULL << 20) : (16ULL << 30)); }

BenchmarkInfo ckpt_info(bool write) {
  return {write ? "checkpoint.write" : "checkpoint.read",
          "storage",
          write ? "checkpoint write: each rank writes its shard to --ckpt-dir and fsyncs it; the slowest rank's time "
                  "is the checkpoint's"
                : "checkpoint read: each rank reads its shard back, its pages first dropped from the page cache",
          "GB/s",
          Scope::independent,
          Efficiency::per_device,
          {{"layout", "file_per_rank or shared_file (each rank at its offset)"},
           {"io", "buffered (the page cache) or direct (O_DIRECT)"},
           {"checkpoint_bytes", "the whole checkpoint (--ckpt-size), split over the ranks of the count"},
           {"rank_bytes", "instead of checkpoint_bytes: each rank's shard (--ckpt-rank-size), the checkpoint k times it"}},
          {"cpu", "cuda"},
          false,
          true};
}

// The directory as this rank sees it, refused (gpuscale::Error) when it cannot take `bytes`.
FsInfo usable_dir(const std::string& dir, std::uint64_t bytes) {
  if (dir.empty())
    throw Error("the storage benchmarks write a checkpoint: give --ckpt-dir DIR (it must exist and be writable)");
  auto fs = probe_fs(dir);
  if (!fs.problem.empty()) throw Error("--ckpt-dir: " + fs.problem);
  if (fs.free_bytes)
    if (const auto why = ckpt_space_problem(fs.path, *fs.free_bytes, bytes)) throw Error("--ckpt-dir: " + *why);
  return fs;
}

// What one rank's point works on: its shard of the checkpoint, the file it goes to, the buffers.
struct ShardWork {
  std::uint64_t total = 0;  // the group's whole checkpoint
  CkptShard shard;
  bool shared = false;  // one file for the group, each rank at its offset
  FsInfo fs;
  std::string path;
  std::unique_ptr<CkptBuffer> source, into;
  std::unique_ptr<ShardStaging> staging;  // the shard in device memory (GPUs); null: host memory (CPUs)
};

// A shared file needs one file system under every rank of the group, and one host for a node-local
// one: why the point is skipped here (nullopt: it runs). Two file systems refuse it on every member
// alike (gpuscale::Error). A file per rank, or a group of one, needs nothing.
std::optional<std::string> shared_file_skip(const ShardWork& w, RunContext& ctx) {
  const Group& g = ctx.group;
  if (!w.shared || g.size() <= 1) return std::nullopt;
  const std::string type = w.fs.mount ? w.fs.mount->fs_type : "unknown";
  const auto all = g.allgather(std::vector<double>{static_cast<double>(g.world_rank()),
                                                   ckpt_fs_key(type, w.fs.mount ? w.fs.mount->source : "")});
  std::vector<CkptPlace> places;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2) {
    const int wr = static_cast<int>(all[i]);
    places.push_back({wr, ctx.hosts ? (*ctx.hosts)[static_cast<std::size_t>(wr)] : "", all[i + 1]});
  }
  const auto verdict = ckpt_shared_verdict(places, type);
  if (verdict.kind == CkptSharedVerdict::Kind::refuse) throw Error(verdict.why);
  if (verdict.kind == CkptSharedVerdict::Kind::skip) return verdict.why;
  return std::nullopt;
}

// A direct point where any rank's file system refuses O_DIRECT (tmpfs, overlay): why it is skipped on
// every rank of the group alike (nullopt: it runs). Each rank probed its own --ckpt-dir (fs_probe.h).
std::optional<std::string> direct_skip(const CkptPoint& p, const ShardWork& w, const Group& g) {
  if (p.io != CkptIo::direct) return std::nullopt;
  const auto refused = g.allgather(w.fs.direct_problem.empty() ? -1.0 : static_cast<double>(g.world_rank()));
  std::vector<std::string> problems;
  if (!w.fs.direct_problem.empty()) problems.push_back(w.fs.direct_problem);  // this rank's own words first
  for (double r : refused)
    if (r >= 0 && static_cast<int>(r) != g.world_rank())
      problems.push_back(fmt::format("rank {}'s file system refuses it", static_cast<int>(r)));
  return ckpt_direct_skip(p.io, problems);
}

// What went wrong in a rank's I/O: its first error, and why a timed read may have come from memory
// ("" when the pages were dropped).
struct IoTrouble {
  std::string failure;
  std::string cache;
};

// An I/O error fails this rank's measurement, but the rank keeps every collective of the point (the
// barriers of each repetition included): its later passes do no I/O and return at once. A rank that
// left the loop would hold the others in their next barrier until the watchdog ended the run.
std::function<double()> guarded(std::string& failure, std::function<double()> io) {
  return [&failure, io = std::move(io)]() -> double {
    if (!failure.empty()) return 0.0;  // no I/O: no time (a planted fault sleeps nothing); the reps are dropped
    try {
      return io();
    } catch (const Error& e) {
      failure = e.what();
      return 0.0;
    }
  };
}

// Checked: the shard read back from the storage (its pages dropped first), every chunk compared, once
// every writer of a shared file is done. A read error is the rank's failure, as a timed one is.
CheckResult read_back(ShardWork& w, const Group& g, std::string& failure) {
  std::uint64_t wrong = 0, chunks = 0;
  g.barrier();
  if (failure.empty()) {
    try {
      (void)drop_cached(w.path, w.shard.offset, w.shard.bytes);
      read_shard(w.path, CkptIo::buffered, w.shard.offset, w.shard.bytes, *w.into, w.source.get(), &wrong);
      chunks = (w.shard.bytes + w.into->size() - 1) / w.into->size();
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  CheckResult check;
  check.checked = chunks;
  check.wrong = wrong;
  if (wrong) check.detail = fmt::format("{} of {} chunks read back differ from what was written", wrong, chunks);
  return check;
}

class CheckpointBenchmark final : public PointBenchmark<CkptPoint> {
 public:
  explicit CheckpointBenchmark(bool write) : PointBenchmark(ckpt_info(write)), write_(write) {}

  CkptPoint point(const nlohmann::json& params) const override {
    const auto layout = params.at("layout").get<std::string>();
    const auto io = params.at("io").get<std::string>();
    if ((layout != "file_per_rank" && layout != "shared_file") || (io != "buffered" && io != "direct"))
      throw Error(fmt::format("checkpoint point: layout {} io {}", layout, io));
    const bool per_rank = params.contains("rank_bytes");
    return {layout == "shared_file" ? CkptLayout::shared_file : CkptLayout::file_per_rank,
            io == "direct" ? CkptIo::direct : CkptIo::buffered,
            per_rank ? 0 : params.at("checkpoint_bytes").get<std::uint64_t>(),
            per_rank ? params.at("rank_bytes").get<std::uint64_t>() : 0};
  }

  // Refused before anything runs (rank 0 plans): no directory, one rank 0 cannot use or fill, a size
  // that cannot be cut for the job's ranks.
  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    const auto& o = ctx.opts;
    if (o.ckpt_bytes && o.ckpt_rank_bytes) throw Error("give --ckpt-size (the whole checkpoint) or --ckpt-rank-size (each rank's shard), not both");
    const auto rank = o.ckpt_rank_bytes.value_or(0);
    const auto bytes = rank ? saturating_mul(rank, static_cast<std::uint64_t>(ctx.world_size)) : default_bytes(o);
    if (const auto why = ckpt_size_problem(bytes, ctx.world_size)) throw Error("--ckpt-size: " + *why);
    (void)usable_dir(o.ckpt_dir, bytes);  // the largest count's checkpoint
    std::vector<nlohmann::json> out;
    for (auto layout : {CkptLayout::file_per_rank, CkptLayout::shared_file})
      for (auto io : {CkptIo::buffered, CkptIo::direct}) {
        out.push_back({{"layout", ckpt_layout_name(layout)}, {"io", ckpt_io_name(io)}});
        out.back()[rank ? "rank_bytes" : "checkpoint_bytes"] = rank ? rank : bytes;
      }
    return out;
  }

  // One point on this rank: its shard prepared, the shared file's file system agreed, the timed
  // writes or reads, the shard read back and checked, the row's figures; the files removed at the end.
  RankMeasurement measure(const CkptPoint& p, RunContext& ctx) const override {
    const Group& g = ctx.group;
    ShardWork w = prepare_shard(p, ctx);
    auto why = shared_file_skip(w, ctx);
    if (!why) why = direct_skip(p, w, g);
    if (why) {
      RankMeasurement skipped;
      skipped.skipped = true;
      skipped.message = *why;
      return skipped;
    }
    struct Removed {  // the point's files go whatever happens; a shared file once its last writer is done
      const std::string& path;
      bool mine;
      ~Removed() {
        if (mine) ::unlink(path.c_str());
      }
    } removed{w.path, !w.shared || g.rank() == 0};

    RankMeasurement out;
    IoTrouble trouble;
    out.reps = time_shard_io(p, w, g, checkpoint_methodology(ctx.opts), trouble);
    const CheckResult check = read_back(w, g, trouble.failure);
    if (!trouble.failure.empty()) {
      out.failed = true;
      out.message = trouble.failure;
      out.reps.clear();
    }
    apply_check(out, check);
    add_checkpoint_figures(out, w, g, trouble.cache);
    if (w.shared) g.barrier();  // every writer done before rank 0 removes the shared file
    return out;
  }

  ExpectedPeak peak_of(const CkptPoint&, const PeakContext&, const std::string&) const override {
    return {std::nullopt, "storage: no expected peak; set it against fio on the same directory (docs/capacity.md)"};
  }

  PointDemand demand_of(const CkptPoint& p, const DemandContext& ctx) const override {
    const auto m = checkpoint_methodology(ctx.opts);
    const auto shard = p.at(1);  // at one rank, the whole checkpoint
    PointDemand d;
    d.memory_bytes = 2 * std::min<std::uint64_t>(kCkptChunk, shard);
    d.memory_what = "2 chunk buffers";
    d.fixed_s = static_cast<double>(shard) * (m.warmup + m.reps + 2) / kSlowStorageBytesPerS;
    return d;
  }

 private:
  // This rank's shard of the group's checkpoint and the buffers it goes through. Every rank checks
  // its own directory and room before any rank writes (agreed_setup: a refusal on one is every rank's).
  ShardWork prepare_shard(const CkptPoint& p, RunContext& ctx) const {
    const Group& g = ctx.group;
    ShardWork w;
    w.total = p.at(g.size());
    w.shard = ckpt_shard(w.total, g.size(), g.rank(), p.layout);
    // A shared file is named after the group's first world rank (groups of one count measure at once).
    const auto ranks = g.allgather(static_cast<double>(g.world_rank()));
    const int owner = static_cast<int>(*std::min_element(ranks.begin(), ranks.end()));
    w.shared = p.layout == CkptLayout::shared_file;
    const std::string tag = fmt::format("{:x}", ctx.seed);
    agreed_setup(g, key(), [&] {
      w.fs = usable_dir(ctx.opts.ckpt_dir, w.shared ? w.total : w.shard.bytes);
      w.path = w.fs.path + "/" + ckpt_file_name(tag, p.layout, w.shared ? owner : g.world_rank());
      const auto chunk = std::min<std::uint64_t>(kCkptChunk, w.shard.bytes);
      w.source = std::make_unique<CkptBuffer>(chunk, ctx.seed ^ (0x9e3779b97f4a7c15ULL * (g.world_rank() + 1)));
      w.into = std::make_unique<CkptBuffer>(chunk, 0);
      w.staging = ctx.device.make_shard_staging(w.shard.bytes, chunk);
      if (w.staging) fill_staged_shard(*w.staging, w.shard.bytes, *w.source);
    });
    return w;
  }

  // Timed: each repetition writes (or reads) the whole shard. An I/O error is kept in `trouble`, not
  // thrown, so that this rank still takes part in every barrier of the point (guarded above).
  std::vector<double> time_shard_io(const CkptPoint& p, ShardWork& w, const Group& g, const Methodology& m,
                                    IoTrouble& trouble) const {
    const double bytes = static_cast<double>(w.shard.bytes);
    const auto to_gb_s = [bytes](double s) { return bytes / s / 1e9; };
    if (write_) {
      // Each timed write makes a new file, as a training job's checkpoint does: the last one is removed
      // untimed before it (a shared file by rank 0, between barriers), so no repetition overwrites
      // blocks the one before allocated, nor frees them in a timed O_TRUNC.
      return time_repetitions(
          FaultSite::memory, m.warmup, m.reps,
          guarded(trouble.failure,
                  [&] { return write_shard(w.path, p.io, false, w.shard.offset, w.shard.bytes, *w.source, w.staging.get()); }),
          to_gb_s,
          [&] {
            g.barrier();
            if (!w.shared || g.rank() == 0) ::unlink(w.path.c_str());
            g.barrier();
          });
    }
    // A read needs the shard on the storage first: written untimed, through the page cache.
    (void)guarded(trouble.failure,
                  [&] { return write_shard(w.path, CkptIo::buffered, !w.shared, w.shard.offset, w.shard.bytes, *w.source); })();
    g.barrier();
    return time_repetitions(
        FaultSite::memory, m.warmup, m.reps,
        guarded(trouble.failure,
                [&] { return read_shard(w.path, p.io, w.shard.offset, w.shard.bytes, *w.into, nullptr, nullptr, w.staging.get()); }),
        to_gb_s,
        [&] {
          // A buffered read must come from the storage, not from the pages the last one left.
          if (p.io == CkptIo::buffered && trouble.failure.empty())
            if (auto why = drop_cached(w.path, w.shard.offset, w.shard.bytes); !why.empty() && trouble.cache.empty())
              trouble.cache = why;
          g.barrier();
        });
  }

  // The checkpoint's time is its slowest rank's (each rank's median repetition), and where it went.
  // A write row also says each training preset's checkpoint time at that bandwidth: planning's figure
  // (planning/checkpoint_time.h), derived from the measurement and named so.
  void add_checkpoint_figures(RankMeasurement& out, const ShardWork& w, const Group& g, const std::string& cache) const {
    const double bytes = static_cast<double>(w.shard.bytes);
    const double mine = out.reps.empty() ? 0.0 : bytes / (median_of(out.reps) * 1e9);
    const auto times = g.allgather(mine);
    const double slowest = *std::max_element(times.begin(), times.end());
    out.metrics["shard_bytes"] = w.shard.bytes;
    out.row_metrics["checkpoint_s"] = slowest;
    out.row_metrics["checkpoint_total_bytes"] = w.total;
    if (slowest > 0) out.row_metrics["checkpoint_gb_s"] = static_cast<double>(w.total) / slowest / 1e9;
    if (write_ && slowest > 0) out.row_metrics["preset_checkpoint_s"] = preset_checkpoint_seconds(static_cast<double>(w.total) / slowest);
    out.row_metrics["checkpoint_memory"] = w.staging ? w.staging->path() : "host";
    out.row_metrics["fs_type"] = w.fs.mount ? w.fs.mount->fs_type : "unknown";
    out.row_metrics["mount_point"] = w.fs.mount ? w.fs.mount->mount_point : "unknown";
    out.row_metrics["mount_options"] = w.fs.mount ? w.fs.mount->options : "";
    const auto uncached = g.allgather(cache.empty() ? 1.0 : 0.0);
    if (std::find(uncached.begin(), uncached.end(), 0.0) != uncached.end())
      out.row_metrics["cache_possible"] = "a rank's pages could not be dropped from the page cache before a timed read";
  }

  bool write_;
};

}  // namespace

void register_checkpoint_benchmarks(Registry& r) {
  r.add(std::make_unique<CheckpointBenchmark>(true));
  r.add(std::make_unique<CheckpointBenchmark>(false));
}

}  // namespace gpuscale
