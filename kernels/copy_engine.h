#pragma once
// Copy bandwidth, an optional capability of a device (Device::copies(); the CPU device has none):
// host <-> device copies through pinned memory, copies inside the device, and peer-to-peer copies
// between the GPUs of a node. kernels/copy_table.h lists the cases and how their bytes count.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/copy_table.h"

namespace gpuscale {

struct CheckResult;

struct CopyCase {
  CopyKind kind = CopyKind::h2d;
  std::uint64_t size_bytes = 0;  // bytes per copy (a multiple of 16: copy_size_rounded)
  int peer_offset = 1;           // peer cases: the peer is GPU (own + offset) mod visible GPUs
  PeerDirection direction = PeerDirection::write;
  PeerMode mode = PeerMode::all_pairs;  // peer cases: every rank's pair at once, or one pair at a time
  std::uint64_t seed = 0;
};

// One set of buffers holding random data, ready to be copied again and again.
class CopyTransfer {
 public:
  virtual ~CopyTransfer() = default;
  virtual double run() = 0;  // one copy (bidir: both at once); seconds on the device's own clock
  // Compares the destination with the source data (the destination starts zeroed, so a copy that
  // never happened is caught as well as one that went wrong).
  virtual CheckResult verify() = 0;
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
};

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  // GPUs this process sees (peer cases pick among them).
  virtual int visible_gpus() const = 0;
  // Why this case cannot run here (no peer, no peer access ...); nullopt when it can.
  virtual std::optional<std::string> unavailable(const CopyCase& c) const = 0;
  virtual std::unique_ptr<CopyTransfer> make(const CopyCase& c) = 0;
};

}  // namespace gpuscale
