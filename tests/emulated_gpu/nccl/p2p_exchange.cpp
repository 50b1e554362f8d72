// A group's point-to-point calls on one communicator (tests only), issued together at ncclGroupEnd
// ("Group Calls": operations inside a group are issued together, so sends and receives in one group
// cannot deadlock each other; "Point-to-point communication": a send must be matched by a receive with
// the same count and type on the peer, matched in issue order). Every message goes through the
// (sender, receiver) channel in chunks; all sends and receives advance in one loop, so none waits on another.
#include <algorithm>
#include <cstring>
#include <map>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/emu_comm.h"
#include "tests/emulated_gpu/nccl/emu_environment.h"
#include "tests/emulated_gpu/nccl/reductions.h"

namespace emu_nccl {
namespace {

struct Message {
  std::byte* data = nullptr;  // const for a send
  std::size_t bytes = 0;
};

// The messages to or from one peer, in issue order, and how far the current one has gone.
struct Queue {
  std::vector<Message> messages;
  std::size_t index = 0, offset = 0;
  bool awaiting_ack = false, last_chunk = false;
  bool done() const { return index >= messages.size(); }
};

class P2pExchange final : public Exchange {
 public:
  P2pExchange(ncclComm* c, std::vector<OpCall> calls, bool hang) : c_(c), hang_(hang) {
    stream_ = gpuscale_emu::stream_of(calls.front().stream_handle);
    for (const auto& call : calls) {
      const std::size_t bytes = call.count * type_size(call.type);
      if (call.is_send) {
        sends_[call.peer].messages.push_back({static_cast<std::byte*>(const_cast<void*>(call.send)), bytes});
        sent_ += bytes;
      } else {
        recvs_[call.peer].messages.push_back({static_cast<std::byte*>(call.recv), bytes});
        received_ += bytes;
      }
    }
  }

  State step() override {
    if (hang_) return State::waiting;  // planted: this rank's group never arrives
    if (!began_) {
      began_ = true;
      start_us_ = max_start_ = std::max(stream_->clock_us, gpuscale_emu::host_clock_us());
      first_ = !c_->connected;
      c_->connected = true;
    }
    bool moved = false;
    for (auto& [peer, q] : sends_) moved |= advance_send(peer, q);
    for (auto& [peer, q] : recvs_) moved |= advance_recv(peer, q);
    const auto all_done = [](const std::map<int, Queue>& m) {
      return std::all_of(m.begin(), m.end(), [](const auto& kv) { return kv.second.done(); });
    };
    if (!all_done(sends_) || !all_done(recvs_)) return moved ? State::progressed : State::waiting;
    finish();
    return State::done;
  }

 private:
  bool advance_send(int peer, Queue& q) {
    Channel* ch = channel(c_->base, c_->layout, c_->rank, peer);
    bool moved = false;
    if (q.awaiting_ack) {
      if (ch->acked.load(std::memory_order_acquire) != ch->sent.load(std::memory_order_relaxed)) return false;
      max_start_ = std::max(max_start_, ch->receiver_start_us);
      q.awaiting_ack = false;
      moved = true;
      if (q.last_chunk) {
        ++q.index;
        q.offset = 0;
      }
    }
    if (q.done()) return moved;
    const Message& m = q.messages[q.index];
    const std::size_t bytes = std::min(c_->layout.channel_data, m.bytes - q.offset);
    if (bytes > 0) std::memcpy(channel_data(c_->base, c_->layout, c_->rank, peer), m.data + q.offset, bytes);
    ch->bytes = bytes;
    ch->sender_start_us = start_us_;
    q.offset += bytes;
    q.last_chunk = q.offset >= m.bytes;  // an empty message is one empty chunk, so both sides count it
    q.awaiting_ack = true;
    ch->sent.store(ch->sent.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return true;
  }

  bool advance_recv(int peer, Queue& q) {
    Channel* ch = channel(c_->base, c_->layout, peer, c_->rank);
    if (q.done()) return false;
    const std::uint64_t acked = ch->acked.load(std::memory_order_relaxed);
    if (ch->sent.load(std::memory_order_acquire) <= acked) return false;
    const Message& m = q.messages[q.index];
    const std::size_t bytes = std::min<std::size_t>(ch->bytes, m.bytes - q.offset);
    if (bytes < ch->bytes)
      fail(c_, ncclInvalidUsage, "a receive from rank " + std::to_string(peer) + " is shorter than the matching send");
    if (bytes > 0) std::memcpy(m.data + q.offset, channel_data(c_->base, c_->layout, peer, c_->rank), bytes);
    max_start_ = std::max(max_start_, ch->sender_start_us);
    q.offset += bytes;
    if (q.offset >= m.bytes) {
      ++q.index;
      q.offset = 0;
    }
    ch->receiver_start_us = start_us_;
    ch->acked.store(acked + 1, std::memory_order_release);
    return true;
  }

  // Ends at the latest start among this rank and its peers plus the duration of the larger of what it
  // sends and what it receives.
  void finish() {
    OpShape shape;
    shape.kind = OpKind::p2p;
    shape.count = std::max(sent_, received_);
    shape.element_size = 1;
    shape.hosts.push_back(c_->hosts[static_cast<std::size_t>(c_->rank)]);
    for (const auto* m : {&sends_, &recvs_})
      for (const auto& kv : *m)
        if (kv.first != c_->rank) shape.hosts.push_back(c_->hosts[static_cast<std::size_t>(kv.first)]);
    shape.nranks = static_cast<int>(shape.hosts.size());
    shape.first_on_comm = first_;
    const double duration = op_duration_us(shape, gpuscale_emu::device(c_->device).model, emu_faults().slow);
    const double latest = max_start_;
    gpuscale_emu::enqueue_timed(stream_, "ncclSend/ncclRecv group of " + std::to_string(shape.count) + " bytes",
                                [latest, duration](double start) { return std::max(start, latest) + duration; });
  }

  ncclComm* c_;
  bool hang_;
  gpuscale_emu::Stream* stream_ = nullptr;
  std::map<int, Queue> sends_, recvs_;
  std::size_t sent_ = 0, received_ = 0;
  bool began_ = false, first_ = false;
  double start_us_ = 0, max_start_ = 0;
};

}  // namespace

std::unique_ptr<Exchange> make_p2p_group(ncclComm* c, std::vector<OpCall> calls, bool hang) {
  return std::make_unique<P2pExchange>(c, std::move(calls), hang);
}

}  // namespace emu_nccl
