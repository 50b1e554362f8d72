#pragma once
// The collective benchmarks' planning decisions, as pure functions (unit-tested): the message sweep,
// which transports a point runs over, whether the sweep fits in a rank's memory, which link a point is
// set against, and what a row says when nccl-tests' rounding changed the size.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/options/options.h"
#include "kernels/device.h"
#include "peaks/peaks.h"

namespace gpuscale {

// The message sizes (-b/-e/-f or -i, or the plan's defaults for `backend`).
std::vector<std::uint64_t> collective_sizes(const RunOptions& o, const std::string& backend);

// `o` with a sweep of the one message `size_bytes`: a collective run inside another benchmark (a fleet
// pair) then holds buffers of its own message, not of the sweep's largest (-e, 8 GiB by default on GPUs),
// as its demand (demand_of) counts.
RunOptions with_one_size(const RunOptions& o, std::uint64_t size_bytes);

// Transports of the "transport" parameter: --transports, else the backend's (`offered`). An empty
// answer means the backend has one transport and rows carry no such parameter (the CPU backend: MPI).
// Throws gpuscale::Error (exit 2) for a transport the backend lacks.
std::vector<std::string> collective_transports(const RunOptions& o, const std::string& backend,
                                               const std::vector<std::string>& offered);

// Why a sweep up to `max_bytes` cannot run: each rank holds a send and a receive buffer of the
// largest size (nccl-tests allocates both at -e) in its share of the device's memory
// (DeviceInfo::usable_memory_bytes). nullopt when it fits.
std::optional<std::string> collective_memory_refusal(std::uint64_t max_bytes, const DeviceInfo& device);

// Whether a collective over `ranks` ranks moves data between them, so that it has a bandwidth: not at
// one rank, where its time is recorded and its algbw, busbw and value are null (n/a), so that no
// reference, comparison or efficiency is made of it (nccl-tests prints busbw 0 there).
inline bool collective_moves_data(int ranks) { return ranks > 1; }

// The link a point is set against: none at one rank, the network between nodes, the intra-node link
// (per message size when the backend measures it) inside one.
ExpectedPeak collective_link_peak(const std::string& topology, const LinkPeaks& links, std::uint64_t size_bytes);

}  // namespace gpuscale
