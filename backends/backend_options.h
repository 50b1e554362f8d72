#pragma once
// What a backend takes from the command line: the few settings that change how it opens its device,
// its collectives and its peaks. The run loop's options (harness/options/options.h) hold one of these, so a
// backend never sees the plan, the output or the reliability settings.
#include <optional>
#include <string>

namespace gpuscale {

struct BackendOptions {
  int threads = 0;                   // CPU backend threads per rank (0 = cores / ranks on node)
  std::string peaks_file;            // --peaks: GPU models added to / replacing the built-in peaks
  double timeout_s = 300;            // NCCL waits: abort after this long (-T; 0 = never)
  std::optional<double> link_peak;   // GB/s, intra-node link peak override (--link-peak)
  std::optional<double> net_peak;    // GB/s, inter-node link peak override (--net-peak)
  std::string mig_binding;           // set by open_backend: how this rank was given its MIG slice, if it was
};

}  // namespace gpuscale
