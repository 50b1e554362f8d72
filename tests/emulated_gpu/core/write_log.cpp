// Writes to device memory, counted and logged by range (emu_core.h, "Writes to device memory"). Its
// own file so that the cuBLASLt tests' stand-in core uses the same rules.
#include <cstdint>
#include <deque>
#include <mutex>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {
namespace {

// The log of known writes, newest last, bounded so that a long run's memory stays flat: a question
// about a time before its oldest record is answered "maybe written".
struct WriteRecord {
  std::uintptr_t lo, hi;  // [lo, hi)
  std::uint64_t epoch;
};
constexpr std::size_t kWriteLogMax = 1 << 16;
std::mutex g_mu;
std::uint64_t g_epoch = 0;           // device_write_epoch()
std::deque<WriteRecord> g_log;
std::uint64_t g_anything_epoch = 0;  // the last write of unknown range
std::uint64_t g_dropped_epoch = 0;   // the newest record dropped from the log

}  // namespace

std::uint64_t device_write_epoch() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_epoch;
}

void note_device_write() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_anything_epoch = ++g_epoch;
}

void note_device_write(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(g_mu);
  const auto lo = reinterpret_cast<std::uintptr_t>(data);
  g_log.push_back({lo, lo + bytes, ++g_epoch});
  if (g_log.size() > kWriteLogMax) {
    g_dropped_epoch = g_log.front().epoch;
    g_log.pop_front();
  }
}

bool unwritten_since(std::uint64_t epoch, const std::vector<WriteRange>& ranges) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_anything_epoch > epoch || g_dropped_epoch > epoch) return false;
  for (auto it = g_log.rbegin(); it != g_log.rend() && it->epoch > epoch; ++it)
    for (const WriteRange& r : ranges) {
      const auto lo = reinterpret_cast<std::uintptr_t>(r.data);
      if (r.bytes != 0 && lo < it->hi && it->lo < lo + r.bytes) return false;
    }
  return true;
}

void note_operation_writes(const Operation& op) {
  if (op.repeatable_result) return;  // the library notes what its product wrote (lt_product_cache.cpp)
  if (!op.writes) {
    note_device_write();
    return;
  }
  for (const WriteRange& w : *op.writes) note_device_write(w.data, w.bytes);
}

}  // namespace gpuscale_emu
