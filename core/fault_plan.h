#pragma once
// The timing faults of GPUSCALE_TEST_FAULT, as pure decisions (tests/unit/core/test_fault_plan.cpp):
// which items the list holds, which of them act on one rank, and how much slower one piece of timed
// work on that rank must really take. core/fault.h spends that time.
//
// Kinds (HOST a host name as the rank acts as it, world/test_hosts.h; GPU, RAIL, A, B local rank
// indices on HOST, from 0; F a finite factor > 1; P a probability in [0, 1]; SECONDS >= 0):
//   slow-host:HOST:F               every timed piece of work of HOST's ranks takes F times as long
//   slow-gpu:HOST[:GPU]:F          compute: GEMM passes, dp-step's GEMMs
//   slow-mem:HOST[:GPU]:F          memory: STREAM and copy passes
//   slow-nic:HOST:RAIL:F           the traffic that leaves HOST from its rank RAIL: collectives and pairs
//                                  of a group spanning another host
//   slow-link:HOST:A-B:F           one intra-node GPU pair: collectives of a group inside HOST that holds
//                                  both A and B, on A and B
//   flaky:HOST:P:F                 each timed repetition of HOST's ranks is F times as long with probability P
//   throttle-after:HOST:SECONDS:F  every timed piece of work of HOST's ranks SECONDS after the run started
//                                  takes F times as long (the shape of thermal throttling)
//   slow-host-reported:HOST:F      the reported variant: each timed figure of HOST's ranks is multiplied by
//                                  F and nothing waits (exact numbers, for tests that need them)
//   flip-bit:HOST:GPU:RATE         not a timing fault: one bit of that rank's GEMM output really flipped in
//                                  each burn-in window with probability RATE in (0, 1] (silent data
//                                  corruption, which the ranks' agreement must catch: core/fault.h)
// All but the last two are spent: the faulty rank sleeps the extra time inside the timed region, so the
// other ranks of its collective really wait for it, as they would for a sick GPU or NIC.
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class TimingFaultKind { slow_host, slow_gpu, slow_mem, slow_nic, slow_link, flaky, throttle_after, slow_host_reported, flip_bit };

struct TimingFault {
  TimingFaultKind kind = TimingFaultKind::slow_host;
  std::string item;  // the list's text of it, for messages
  std::string host;
  int index = -1;    // GPU, RAIL or A; -1: every rank of the host
  int peer = -1;     // B of slow-link
  double probability = 1;  // flaky; flip-bit's RATE
  double after_s = 0;      // throttle-after
  double factor = 1;
};

// The timing items of a fault list, in list order. Every item's kind is checked: one that is not a
// known kind (timing, wrong:, fail:, stall:, setup-fail:, telemetry:, store-pause, store-slow), or a
// malformed timing item (no host, a bad number, F <= 1, P outside [0, 1], A == B, the same host given
// twice to one kind), throws gpuscale::Error (exit 2), one line naming GPUSCALE_TEST_FAULT and the item.
std::vector<TimingFault> parse_timing_faults(std::string_view fault_list);

// Checks the items against the job: `hosts` is the host of every world rank. A host no rank acts as,
// or a GPU, RAIL, A or B beyond that host's ranks, throws gpuscale::Error (exit 2) naming the item.
void check_fault_places(const std::vector<TimingFault>& faults, const std::vector<std::string>& hosts);

// Where one piece of timed work runs, as its rank sees it.
enum class FaultSite { compute, memory, comm };
struct WorkPlace {
  bool leaves_host = false;     // a collective whose group spans another host
  std::vector<int> local_peers; // local indices of the collective group's members on this rank's host (itself included)
};

// The factor by which each site of one timed repetition is slowed on the rank at (host, local index):
// the product of every item acting there. `elapsed_s`: seconds since the run started (throttle-after);
// `draws`: one uniform [0, 1) number per flaky item in list order (fewer: the rest count as not drawn).
struct PlantedFactors {
  double compute = 1, memory = 1, comm = 1;
  double of(FaultSite site) const { return site == FaultSite::compute ? compute : site == FaultSite::memory ? memory : comm; }
};
PlantedFactors planted_factors(const std::vector<TimingFault>& faults, std::string_view host, int local_index,
                               const WorkPlace& work, double elapsed_s, const std::vector<double>& draws);

// The items of `faults` that act on (host, local index) at all: a rank with none pays nothing.
std::vector<TimingFault> faults_of_rank(const std::vector<TimingFault>& faults, std::string_view host, int local_index);

// The slow-host-reported factor of `host` (1 when none).
double reported_factor(const std::vector<TimingFault>& faults, std::string_view host);

}  // namespace gpuscale
