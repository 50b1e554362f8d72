#pragma once
// Link peaks for the CPU backend's collectives. Shared memory between ranks has no datasheet figure,
// so the intra-node reference is measured on rank 0's node: the median of several one-thread memcpy
// of a buffer 4x the last-level cache (the copy an MPI shared-memory transport makes at best, from
// memory, not cache), once per run, when a collective row first needs it; labelled as measured. A
// collective whose messages stay in cache can beat it: its row is flagged above its peak
// (harness/rows/row_flags.h). The inter-node reference is the fastest network port's line rate
// (/sys/class/net/*/speed, /sys/class/infiniband/*/ports/*/rate) of the slowest node. --link-peak
// and --net-peak override them.
#include <optional>
#include <string>

#include "backends/backend_options.h"
#include "peaks/peaks.h"
#include "world/world.h"

namespace gpuscale {

LinkPeaks cpu_link_peaks(const World& world, const BackendOptions& opts);

// The inter-node reference of every backend: --net-peak, else the line rate of the slowest node's
// fastest network port (called on every rank, together).
ExpectedPeak network_link_peak(const World& world, const BackendOptions& opts);

// Fastest port on this node in GB/s, with its name; nullopt when none reports a speed.
std::optional<std::pair<double, std::string>> fastest_network_port(const std::string& sysfs_root = "/sys");

inline constexpr int kLinkProbeReps = 7;  // timed copies of the probe; their median is the peak

// Bytes per buffer of the probe: 4x the last-level cache, within 64 MiB .. 1 GiB, and the two buffers
// at most a quarter of `available_bytes` (0: unknown, no cap).
std::uint64_t link_probe_bytes(std::uint64_t llc_bytes, std::uint64_t available_bytes);

// Bytes copied per second (GB/s) by one thread: the median of `reps` timed copies of `bytes`, after
// one untimed copy that faults the pages in.
double memcpy_bandwidth(std::uint64_t bytes, int reps);

// "100 Gb/sec (4X EDR)" -> 12.5 (GB/s); nullopt when unparsable.
std::optional<double> parse_ib_rate(const std::string& text);

}  // namespace gpuscale
