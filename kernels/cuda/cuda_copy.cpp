// Copy bandwidth on the GPU, nvbandwidth's main cases: pinned host <-> device (copy engines, one
// direction or both at once), device to device, and peer to peer (copy engine, or a copy kernel on
// this GPU's SMs through peer access). Every buffer holds random words; the destination starts zeroed
// and is compared with the source words after timing.
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/stats.h"
#include "kernels/cuda/copy_kernels.cuh"
#include "kernels/cuda/cuda_internal.h"

namespace gpuscale::cuda {
namespace {

CheckResult wrong_words_result(std::uint64_t n, std::uint64_t wrong, std::uint64_t first, std::uint64_t seed,
                               const char* where, std::uint32_t got) {
  CheckResult r{n, wrong, wrong ? 1.0 : 0.0, ""};
  if (wrong)
    r.detail = fmt::format("{} of {} words wrong in {}; first at [{}]: got {:#010x}, expected {:#010x}", wrong, n, where,
                           first, got, copy_word(seed, first));
  return r;
}

// Checks n words on GPU `ordinal` against the source words.
CheckResult check_device_words(int ordinal, const std::uint32_t* p, std::uint64_t n, std::uint64_t seed,
                               const char* where) {
  ScopedDevice on(ordinal);
  Stream s;
  DeviceMemory counts(ordinal, 2 * sizeof(unsigned long long));
  const unsigned long long init[2] = {0, ~0ULL};
  check(cudaMemcpyAsync(counts.get(), init, sizeof init, cudaMemcpyHostToDevice, s.get()), "cudaMemcpyAsync");
  check(count_wrong_copy_words(p, n, seed, counts.as<unsigned long long>(), helper_launch(ordinal, n), s.get()),
        "count_wrong_copy_words launch");
  unsigned long long out[2] = {0, 0};
  check(cudaMemcpyAsync(out, counts.get(), sizeof out, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync");
  s.synchronize();
  std::uint32_t got = 0;
  if (out[0] > 0) {
    check(cudaMemcpyAsync(&got, p + out[1], sizeof got, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync");
    s.synchronize();
  }
  return wrong_words_result(n, out[0], out[1], seed, where, got);
}

CheckResult check_host_words(const std::uint32_t* p, std::uint64_t n, std::uint64_t seed, const char* where) {
  std::uint64_t wrong = 0, first = n;
#pragma omp parallel for reduction(+ : wrong) reduction(min : first) schedule(static)
  for (std::uint64_t i = 0; i < n; ++i)
    if (p[i] != copy_word(seed, i)) {
      ++wrong;
      if (i < first) first = i;
    }
  return wrong_words_result(n, wrong, first, seed, where, wrong ? p[first] : 0);
}

void fill_host_words(std::uint32_t* p, std::uint64_t n, std::uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (std::uint64_t i = 0; i < n; ++i) p[i] = copy_word(seed, i);
}

void fill_device_words(int ordinal, std::uint32_t* p, std::uint64_t n, std::uint64_t seed) {
  ScopedDevice on(ordinal);
  check(fill_copy_words(p, n, seed, helper_launch(ordinal, n), nullptr), "fill_copy_words launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// Test-only (GPUSCALE_TEST_FAULT=wrong:copy.<case>): flips one destination word after the copy.
bool copy_fault(const CopyCase& c) { return fault_injected(fmt::format("wrong:copy.{}", copy_spec(c.kind).name)); }

// The zero and corrupt helpers write on a stream ordered with the timed copies: the context's stream
// when the buffer is on this GPU (the copies run on it), else a stream on the buffer's GPU; either is
// synchronized, so the write is done before the next copy starts (cudaMemset on the legacy stream is
// not ordered with the context's non-blocking stream).
void memset_ordered(CudaContext& ctx, const DeviceMemory& m, std::uint64_t offset, int value, std::uint64_t bytes) {
  ScopedDevice on(m.ordinal());
  if (m.ordinal() == ctx.ordinal) {
    check(cudaMemsetAsync(m.as<char>() + offset, value, bytes, ctx.stream.get()), "cudaMemsetAsync");
    ctx.stream.synchronize();
    return;
  }
  Stream s;
  check(cudaMemsetAsync(m.as<char>() + offset, value, bytes, s.get()), "cudaMemsetAsync");
  s.synchronize();
}

void corrupt_device_word(CudaContext& ctx, const DeviceMemory& m, std::uint64_t words) {
  memset_ordered(ctx, m, (words / 2) * sizeof(std::uint32_t), 0xA5, sizeof(std::uint32_t));
}

void zero_device(CudaContext& ctx, const DeviceMemory& m) { memset_ordered(ctx, m, 0, 0, m.bytes()); }

// h2d, d2h and bidir: pinned host buffers and device buffers, timed on this GPU's copy engines.
class HostCopy final : public CopyTransfer {
 public:
  HostCopy(CudaContext& ctx, const CopyCase& c) : ctx_(ctx), c_(c), words_(c.size_bytes / 4) {
    const bool up = c.kind != CopyKind::d2h, down = c.kind != CopyKind::h2d;
    require_memory(fmt::format("copy.{}: {} of device memory", copy_spec(c.kind).name, format_bytes(c.size_bytes)),
                   c.size_bytes * ((up && down) ? 2 : 1), ctx.ordinal);
    if (up) {
      host_src_ = std::make_unique<PinnedMemory>(c.size_bytes);
      dev_dst_ = DeviceMemory(ctx.ordinal, c.size_bytes);
      fill_host_words(host_src_->as<std::uint32_t>(), words_, c.seed);
      zero_device(ctx, dev_dst_);
    }
    if (down) {
      dev_src_ = DeviceMemory(ctx.ordinal, c.size_bytes);
      host_dst_ = std::make_unique<PinnedMemory>(c.size_bytes);
      fill_device_words(ctx.ordinal, dev_src_.as<std::uint32_t>(), words_, c.seed);
      std::memset(host_dst_->get(), 0, c.size_bytes);
    }
  }

  double run() override {
    ScopedDevice on(ctx_.ordinal);
    const auto s1 = ctx_.stream.get(), s2 = second_.get();
    start_.record(s1);
    if (c_.kind == CopyKind::bidir) {
      check(cudaStreamWaitEvent(s2, start_.get(), 0), "cudaStreamWaitEvent");
      check(cudaMemcpyAsync(dev_dst_.get(), host_src_->get(), c_.size_bytes, cudaMemcpyHostToDevice, s1), "cudaMemcpyAsync");
      check(cudaMemcpyAsync(host_dst_->get(), dev_src_.get(), c_.size_bytes, cudaMemcpyDeviceToHost, s2), "cudaMemcpyAsync");
      up_done_.record(s1);
      down_done_.record(s2);
      check(cudaStreamWaitEvent(s1, down_done_.get(), 0), "cudaStreamWaitEvent");
      stop_.record(s1);
      const double t = elapsed_seconds(start_, stop_);
      up_s_.push_back(elapsed_seconds(start_, up_done_));
      down_s_.push_back(elapsed_seconds(start_, down_done_));
      inject_fault();
      return t;
    }
    if (c_.kind == CopyKind::h2d)
      check(cudaMemcpyAsync(dev_dst_.get(), host_src_->get(), c_.size_bytes, cudaMemcpyHostToDevice, s1), "cudaMemcpyAsync");
    else
      check(cudaMemcpyAsync(host_dst_->get(), dev_src_.get(), c_.size_bytes, cudaMemcpyDeviceToHost, s1), "cudaMemcpyAsync");
    stop_.record(s1);
    const double t = elapsed_seconds(start_, stop_);
    inject_fault();
    return t;
  }

  CheckResult verify() override {
    CheckResult r;
    if (host_src_) r = check_device_words(ctx_.ordinal, dev_dst_.as<std::uint32_t>(), words_, c_.seed, "device memory");
    if (host_dst_) {
      const auto h = check_host_words(host_dst_->as<std::uint32_t>(), words_, c_.seed, "host memory");
      if (r.wrong == 0) r.detail = h.detail;
      r.checked += h.checked;
      r.wrong += h.wrong;
      r.max_error = std::max(r.max_error, h.max_error);
    }
    return r;
  }

  nlohmann::json details() const override {
    nlohmann::json j = {{"size_bytes", c_.size_bytes}, {"host_memory", "pinned (cudaMallocHost)"}};
    if (!up_s_.empty()) {
      // Each direction's own rate over the same interval: how the two shared the link.
      j["h2d_gbps"] = static_cast<double>(c_.size_bytes) / median_of(up_s_) / 1e9;
      j["d2h_gbps"] = static_cast<double>(c_.size_bytes) / median_of(down_s_) / 1e9;
    }
    return j;
  }

 private:
  void inject_fault() {
    if (!copy_fault(c_)) return;
    if (host_dst_) host_dst_->as<std::uint32_t>()[words_ / 2] ^= 0xA5A5A5A5u;
    if (host_src_) corrupt_device_word(ctx_, dev_dst_, words_);
  }

  CudaContext& ctx_;
  CopyCase c_;
  std::uint64_t words_;
  std::unique_ptr<PinnedMemory> host_src_, host_dst_;
  DeviceMemory dev_src_, dev_dst_;
  Stream second_;
  Event start_, stop_, up_done_, down_done_;
  std::vector<double> up_s_, down_s_;
};

// d2d, p2p_ce and p2p_sm: a source and a destination buffer on this GPU or its peer.
class DeviceCopy final : public CopyTransfer {
 public:
  DeviceCopy(CudaContext& ctx, const CopyCase& c, int peer) : ctx_(ctx), c_(c), words_(c.size_bytes / 4) {
    const bool is_peer = copy_spec(c.kind).peer;
    const bool write = c.direction == PeerDirection::write;
    src_dev_ = is_peer && !write ? peer : ctx.ordinal;
    dst_dev_ = is_peer && write ? peer : ctx.ordinal;
    const auto what = fmt::format("copy.{}: {} per buffer", copy_spec(c.kind).name, format_bytes(c.size_bytes));
    if (src_dev_ == dst_dev_) {
      require_memory(what, 2 * c.size_bytes, ctx.ordinal);
    } else {
      require_memory(what, c.size_bytes, src_dev_);
      require_memory(what, c.size_bytes, dst_dev_);
      ScopedDevice on(ctx.ordinal);
      const auto rc = cudaDeviceEnablePeerAccess(peer, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else
        check(rc, "cudaDeviceEnablePeerAccess");
    }
    src_ = DeviceMemory(src_dev_, c.size_bytes);
    dst_ = DeviceMemory(dst_dev_, c.size_bytes);
    fill_device_words(src_dev_, src_.as<std::uint32_t>(), words_, c.seed);
    zero_device(ctx, dst_);
    if (c.kind == CopyKind::p2p_sm) {
      const int per_sm = copy_words_blocks_per_sm(kStreamThreads);
      if (per_sm <= 0) throw Error("the occupancy query for the SM copy kernel failed", kExitInvalidResult);
      launch_ = {grid_blocks(ctx.sm_count, per_sm, kStreamThreads, words_, 4), kStreamThreads};
    }
  }

  double run() override {
    ScopedDevice on(ctx_.ordinal);
    const auto s = ctx_.stream.get();
    start_.record(s);
    switch (c_.kind) {
      case CopyKind::d2d:
        check(cudaMemcpyAsync(dst_.get(), src_.get(), c_.size_bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
        break;
      case CopyKind::p2p_ce:
        check(cudaMemcpyPeerAsync(dst_.get(), dst_dev_, src_.get(), src_dev_, c_.size_bytes, s), "cudaMemcpyPeerAsync");
        break;
      default:
        check(copy_words(dst_.as<std::uint32_t>(), src_.as<std::uint32_t>(), words_, launch_, s), "SM copy kernel launch");
        break;
    }
    stop_.record(s);
    const double t = elapsed_seconds(start_, stop_);
    if (copy_fault(c_)) corrupt_device_word(ctx_, dst_, words_);
    return t;
  }

  CheckResult verify() override {
    return check_device_words(dst_dev_, dst_.as<std::uint32_t>(), words_, c_.seed,
                              dst_dev_ == ctx_.ordinal ? "this GPU's memory" : "the peer GPU's memory");
  }

  nlohmann::json details() const override {
    nlohmann::json j = {{"size_bytes", c_.size_bytes}, {"source_gpu", src_dev_}, {"destination_gpu", dst_dev_}};
    if (c_.kind == CopyKind::p2p_sm) j["grid"] = {launch_.blocks, launch_.threads};
    return j;
  }

 private:
  CudaContext& ctx_;
  CopyCase c_;
  std::uint64_t words_;
  int src_dev_ = 0, dst_dev_ = 0;
  DeviceMemory src_, dst_;
  StreamLaunch launch_{1, kStreamThreads};
  Event start_, stop_;
};

class CudaCopyEngine final : public CopyEngine {
 public:
  explicit CudaCopyEngine(CudaContext& ctx) : ctx_(ctx) { check(cudaGetDeviceCount(&visible_), "cudaGetDeviceCount"); }

  int visible_gpus() const override { return visible_; }

  std::optional<std::string> unavailable(const CopyCase& c) const override {
    if (!copy_spec(c.kind).peer) return std::nullopt;
    if (visible_ < 2)
      return std::string("this process sees one GPU (CUDA_VISIBLE_DEVICES or --gpus-per-task): no peer to copy with");
    const int peer = peer_ordinal(ctx_.ordinal, c.peer_offset, visible_);
    if (peer == ctx_.ordinal)
      return fmt::format("peer offset {} maps GPU {} onto itself ({} GPUs visible)", c.peer_offset, ctx_.ordinal,
                         visible_);
    int can = 0;
    check(cudaDeviceCanAccessPeer(&can, ctx_.ordinal, peer), "cudaDeviceCanAccessPeer");
    if (!can)
      return fmt::format("GPU {} cannot access GPU {} directly (cudaDeviceCanAccessPeer is 0): no peer-to-peer path",
                         ctx_.ordinal, peer);
    return std::nullopt;
  }

  std::unique_ptr<CopyTransfer> make(const CopyCase& c) override {
    if (auto why = unavailable(c)) throw Error(*why, kExitInvalidResult);
    if (c.size_bytes == 0 || c.size_bytes % 16 != 0)
      throw Error(fmt::format("copy size {} is not a positive multiple of 16 bytes", c.size_bytes), kExitInvalidResult);
    ScopedDevice on(ctx_.ordinal);
    switch (c.kind) {
      case CopyKind::h2d:
      case CopyKind::d2h:
      case CopyKind::bidir: return std::make_unique<HostCopy>(ctx_, c);
      default: return std::make_unique<DeviceCopy>(ctx_, c, peer_ordinal(ctx_.ordinal, c.peer_offset, visible_));
    }
  }

 private:
  CudaContext& ctx_;
  int visible_ = 1;
};

}  // namespace

std::unique_ptr<CopyEngine> make_cuda_copy_engine(CudaContext& ctx) { return std::make_unique<CudaCopyEngine>(ctx); }

}  // namespace gpuscale::cuda
