#pragma once
// Link peaks for the CPU backend's collectives. Shared memory between ranks has no datasheet figure,
// so the intra-node reference is measured: a one-thread memcpy of the message's size on rank 0's
// node, the copy an MPI shared-memory transport makes at best (same size, so cache effects match).
// It is labelled as measured. The inter-node reference is the fastest network port's line rate
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

// Bytes copied per second (GB/s) by one thread for a message of `bytes`, best of several timed batches.
double memcpy_bandwidth(std::uint64_t bytes);

// "100 Gb/sec (4X EDR)" -> 12.5 (GB/s); nullopt when unparsable.
std::optional<double> parse_ib_rate(const std::string& text);

}  // namespace gpuscale
