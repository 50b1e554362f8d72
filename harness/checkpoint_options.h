#pragma once
// The checkpoint storage benchmark's options of `gpuscale run` (--ckpt-dir, --ckpt-size): their rows
// of the option table (harness/run_option_table.cpp adds them in its order).
#include <vector>

#include "harness/run_option_table.h"

namespace gpuscale {

void add_checkpoint_options(std::vector<RunOption>& table);

}  // namespace gpuscale
