#pragma once
// The timing faults of GPUSCALE_TEST_FAULT, as pure decisions (tests/unit/core/test_fault_plan.cpp):
// which items the list holds, which of them act on one rank, and how much slower one piece of timed
// work on that rank must really take. core/fault.h spends that time.
//
// The kinds, their items' syntax and where each acts are the table of kinds (core/fault_kinds.h,
// core/fault_kind_table.def); this file reads it. The other items of the list (wrong:, fail:, stall:,
// setup-fail:, telemetry:, store-pause, store-slow) are read where they act (core/fault.h,
// fault_injected) and only recognised here.
#include <string>
#include <string_view>
#include <vector>

#include "core/fault_kinds.h"

namespace gpuscale {

struct TimingFault {
  FaultKind kind = FaultKind::slow_host;  // a kind with an item of its own
  std::string item;  // the list's text of it, for messages
  std::string host;
  int index = -1;    // GPU, RAIL or A; -1: every rank of the host
  int peer = -1;     // B of slow-link
  double probability = 1;  // P of a probability field, or a RATE number (flip-bit)
  double after_s = 0;      // throttle-after
  double factor = 1;
};

// The timing items of a fault list (those of the table's kinds), in list order. Every item's kind is
// checked: one that is neither a table kind's item nor one of the other items above, or a malformed
// timing item (no host, a bad number, F <= 1, P outside [0, 1], A == B, the same host given
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
