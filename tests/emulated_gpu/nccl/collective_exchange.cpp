// A collective's exchange through the ranks' staging slots (tests only). Chunk by chunk every rank
// stages its part in its own slot, then, once every rank has staged the same chunk, reads all slots and
// writes its result; a slot is reused only after every rank has read it. Reductions combine the ranks
// in rank order (reductions.h), so all ranks compute bitwise the same values.
#include <algorithm>
#include <cstring>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/emu_comm.h"
#include "tests/emulated_gpu/nccl/emu_environment.h"
#include "tests/emulated_gpu/nccl/reductions.h"

namespace emu_nccl {
namespace {

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::all_reduce: return "ncclAllReduce";
    case OpKind::all_gather: return "ncclAllGather";
    case OpKind::reduce_scatter: return "ncclReduceScatter";
    case OpKind::broadcast: return "ncclBroadcast";
    case OpKind::reduce: return "ncclReduce";
    case OpKind::p2p: return "ncclSend/ncclRecv";
  }
  return "?";
}

class CollectiveExchange final : public Exchange {
 public:
  CollectiveExchange(ncclComm* c, const OpCall& call, bool hang) : c_(c), call_(call), hang_(hang) {
    es_ = type_size(call.type);
    const std::size_t per_block = call.kind == OpKind::reduce_scatter ? static_cast<std::size_t>(c->nranks) : 1;
    chunk_elems_ = std::max<std::size_t>(1, c->layout.slot_data / (es_ * per_block));
    chunks_ = std::max<std::size_t>(1, (call.count + chunk_elems_ - 1) / chunk_elems_);
    if (!call.control) stream_ = gpuscale_emu::stream_of(call.stream_handle);
  }

  State step() override {
    if (hang_) return State::waiting;  // planted: this rank's operation never arrives
    if (!began_) {  // at the front of the communicator's queue: what came before has been enqueued
      began_ = true;
      // Posted to the peers: where this rank's operation starts on its stream (emu_core.h: work starts
      // at max(stream clock, host clock)).
      if (!call_.control) {
        start_us_ = std::max(stream_->clock_us, gpuscale_emu::host_clock_us());
        max_start_ = start_us_;
        first_ = !c_->connected;
        c_->connected = true;
      }
    }
    bool moved = false;
    while (k_ < chunks_) {
      const std::uint64_t seq = c_->coll_seq + 1;
      if (!staged_) {
        for (int r = 0; r < c_->nranks; ++r)
          if (slot(c_->base, c_->layout, r)->consumed.load(std::memory_order_acquire) + 1 < seq) return state(moved);
        stage(slot_data(c_->base, c_->layout, c_->rank));
        RankSlot* me = slot(c_->base, c_->layout, c_->rank);
        me->start_us = start_us_;
        me->posted.store(seq, std::memory_order_release);
        staged_ = moved = true;
      }
      for (int r = 0; r < c_->nranks; ++r)
        if (slot(c_->base, c_->layout, r)->posted.load(std::memory_order_acquire) < seq) return state(moved);
      for (int r = 0; r < c_->nranks; ++r) max_start_ = std::max(max_start_, slot(c_->base, c_->layout, r)->start_us);
      consume();
      slot(c_->base, c_->layout, c_->rank)->consumed.store(seq, std::memory_order_release);
      c_->coll_seq = seq;
      ++k_;
      staged_ = false;
      moved = true;
    }
    finish();
    return State::done;
  }

 private:
  State state(bool moved) const { return moved ? State::progressed : State::waiting; }
  std::size_t off() const { return k_ * chunk_elems_; }
  std::size_t len() const { return std::min(chunk_elems_, call_.count - std::min(call_.count, off())); }
  const std::byte* send_at(std::size_t elem) const { return static_cast<const std::byte*>(call_.send) + elem * es_; }
  std::byte* recv_at(std::size_t elem) const { return static_cast<std::byte*>(call_.recv) + elem * es_; }

  void stage(std::byte* mine) const {
    const std::size_t bytes = len() * es_;
    if (bytes == 0) return;
    switch (call_.kind) {
      case OpKind::broadcast:
        if (c_->rank == call_.root) std::memcpy(mine, send_at(off()), bytes);
        break;
      case OpKind::reduce_scatter:  // block b's chunk at b * chunk
        for (std::size_t b = 0; b < static_cast<std::size_t>(c_->nranks); ++b)
          std::memcpy(mine + b * chunk_elems_ * es_, send_at(b * call_.count + off()), bytes);
        break;
      default: std::memcpy(mine, send_at(off()), bytes);
    }
  }

  void consume() const {
    const std::size_t n = len(), bytes = n * es_;
    if (bytes == 0) return;
    std::vector<const void*> inputs(static_cast<std::size_t>(c_->nranks));
    const std::size_t block = call_.kind == OpKind::reduce_scatter ? static_cast<std::size_t>(c_->rank) * chunk_elems_ * es_ : 0;
    for (int r = 0; r < c_->nranks; ++r) inputs[static_cast<std::size_t>(r)] = slot_data(c_->base, c_->layout, r) + block;
    switch (call_.kind) {
      case OpKind::all_reduce:
      case OpKind::reduce_scatter:
        reduce_ranks(call_.type, call_.op, c_->nranks, inputs.data(), recv_at(off()), n);
        break;
      case OpKind::reduce:
        if (c_->rank == call_.root) reduce_ranks(call_.type, call_.op, c_->nranks, inputs.data(), recv_at(off()), n);
        break;
      case OpKind::broadcast:
        std::memmove(recv_at(off()), inputs[static_cast<std::size_t>(call_.root)], bytes);
        break;
      case OpKind::all_gather:
        for (std::size_t r = 0; r < inputs.size(); ++r) std::memmove(recv_at(r * call_.count + off()), inputs[r], bytes);
        break;
      case OpKind::p2p: break;
    }
  }

  // The operation ends for every member at the latest member's start plus its duration.
  void finish() {
    if (call_.control) return;
    OpShape shape;
    shape.kind = call_.kind;
    shape.count = call_.count;
    shape.element_size = es_;
    shape.nranks = c_->nranks;
    shape.hosts = c_->hosts;
    shape.first_on_comm = first_;
    const double duration = op_duration_us(shape, gpuscale_emu::device(c_->device).model, emu_faults().slow);
    const std::string what = std::string(kind_name(call_.kind)) + " " + std::to_string(call_.count) + " elements of " +
                             std::to_string(es_) + " bytes on " + std::to_string(c_->nranks) + " ranks";
    const double latest = max_start_;
    // What it wrote: this rank's receive buffer (all of every rank's blocks for an all_gather; nothing
    // off the root of a reduce).
    std::vector<gpuscale_emu::WriteRange> wrote;
    if (call_.kind != OpKind::reduce || c_->rank == call_.root)
      wrote.push_back({call_.recv, (call_.kind == OpKind::all_gather ? static_cast<std::size_t>(c_->nranks) : 1) * call_.count * es_});
    gpuscale_emu::enqueue_timed(stream_, what, [latest, duration](double start) { return std::max(start, latest) + duration; },
                                std::move(wrote));
  }

  ncclComm* c_;
  OpCall call_;
  bool hang_;
  std::size_t es_ = 1, chunk_elems_ = 1, chunks_ = 1, k_ = 0;
  bool began_ = false, staged_ = false, first_ = false;
  gpuscale_emu::Stream* stream_ = nullptr;
  double start_us_ = 0, max_start_ = 0;
};

}  // namespace

std::unique_ptr<Exchange> make_collective(ncclComm* c, const OpCall& call, bool hang) {
  return std::make_unique<CollectiveExchange>(c, call, hang);
}

}  // namespace emu_nccl
