#include "core/launcher.h"

#include <cstdlib>
#include <string>

namespace gpuscale {

int launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) {
      try {
        return std::stoi(v);
      } catch (const std::exception&) {
      }
    }
  }
  return -1;
}

}  // namespace gpuscale
