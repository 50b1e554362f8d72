#pragma once
// What the CPU backend needs to know about the node it runs on, read from Linux (/proc, /sys).
#include <cstdint>
#include <istream>
#include <optional>
#include <string>

namespace gpuscale {

struct CpuTopology {
  std::string model;                  // /proc/cpuinfo "model name"
  int online_cores = 1;               // logical CPUs online on the node
  int affinity_cores = 1;             // logical CPUs this process may run on (sched_getaffinity)
  std::uint64_t llc_bytes = 0;        // largest cache level's size (0 when unknown)
  std::string llc_name;               // e.g. "L3"
  std::uint64_t memory_bytes = 0;     // MemTotal
  std::uint64_t available_bytes = 0;  // MemAvailable
  std::string memory_unread;          // why MemAvailable could not be read (empty: it was); 0 bytes then
};

CpuTopology read_cpu_topology();

// A field of /proc/meminfo's text ("MemAvailable"), in bytes; nullopt when the text has no such line.
std::optional<std::uint64_t> meminfo_field(std::istream& meminfo, const std::string& name);

// Threads for one rank: the node's cores shared evenly among its ranks (at least one), never more
// than this process may run on, so several ranks on one node never oversubscribe it.
int default_threads_per_rank(const CpuTopology& topo, int ranks_on_node);

// Default bytes per STREAM array: 4x the last-level cache (at least 64 MiB), so the figure is memory
// bandwidth, not cache bandwidth; capped so that the 3 arrays of every rank on the node take at most
// half of the memory available (`capped` says when the cap applied).
std::uint64_t default_cpu_stream_array_bytes(const CpuTopology& topo, int ranks_on_node, bool* capped = nullptr);

}  // namespace gpuscale
