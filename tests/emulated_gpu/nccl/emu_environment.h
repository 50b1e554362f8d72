#pragma once
// What the emulated NCCL reads from the environment (tests only).
//   GPUSCALE_EMU_FAULTS        planted faults, comma-separated; the kinds this library acts on:
//                                hang-collective:RANK:N  world rank RANK's N-th operation (1-based,
//                                  collectives and point-to-point groups counted together in this
//                                  process) never arrives
//                                slow-link:HOST:F, slow-nic:HOST:F  (collective_model.h)
//                              other kinds belong to the other emulated libraries and are skipped.
//   GPUSCALE_TEST_HOSTS        one host name per world rank (world/test_hosts.h); unset: one host
//   OMPI_COMM_WORLD_RANK, PMI_RANK  this process's world rank
//   GPUSCALE_EMU_NCCL_WAIT_S   the bound on every wait without progress (default 120 s): an emulation
//                              limit, where a real NCCL would wait forever
//   FAKE_NCCL_VERSION          ncclGetVersion's answer (default 22800), as tests/fake_nccl
#include <string>
#include <vector>

#include "tests/emulated_gpu/nccl/collective_model.h"

namespace emu_nccl {

struct HangFault {
  int world_rank = -1;
  long nth = 0;
};

struct EmuFaults {
  std::vector<HangFault> hangs;
  std::vector<SlowFault> slow;
};

// Parses the kinds above from `text`; malformed items of these kinds are skipped with a line on stderr.
EmuFaults parse_emu_faults(const std::string& text);
const EmuFaults& emu_faults();  // of GPUSCALE_EMU_FAULTS, read once

int world_rank();               // -1 when neither variable is set
std::string this_host();        // GPUSCALE_TEST_HOSTS's name of world_rank(), "" when unknown
double wait_bound_s();
int reported_version();

}  // namespace emu_nccl
