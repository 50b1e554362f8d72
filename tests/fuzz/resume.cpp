// Fuzz target: gpuscale run --resume: the recorded options and the plan split, against the launch the
// file itself describes (so the deeper checks run) and against a fixed one.
#include "fuzz_input.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  const std::string text = fuzz::text_of(data, size);
  fuzz::refuse_only_with_error([&] { (void)readers::resume(text); });
  fuzz::refuse_only_with_error([&] { (void)readers::resume(text, LaunchShape{"cpu", {"a", "a"}, {"x", "x"}}); });
  return 0;
}
