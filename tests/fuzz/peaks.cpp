// Fuzz target: gpuscale run --peaks FILE: the strict reader (depth, duplicate keys, NaN), every model and
// figure, and the table built from it with the built-in models, looked up by name and by PCI id. The
// messages quote the file: they must stay one line without control characters.
#include "fuzz_input.h"

#include <stdexcept>

#include "peaks/gpu_peaks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  const std::string text = fuzz::text_of(data, size);
  try {
    auto models = parse_gpu_peaks(text, "peaks.json");
    std::vector<std::string> names;
    for (const auto& m : models) names.insert(names.end(), m.names.begin(), m.names.end());
    GpuPeakTable table(parse_gpu_peaks(builtin_gpu_peaks_text(), "built-in peaks"), std::move(models));
    names.push_back("NVIDIA H200");
    for (const auto& n : names) {
      DeviceInfo d;
      d.backend = "cuda";
      d.name = n;
      (void)table.memory_bandwidth(d);
      (void)table.compute(d, DType::bf16);
      (void)table.link_bandwidth(d, LinkKind::peer);
    }
  } catch (const Error& e) {
    for (const char* c = e.what(); *c; ++c)
      if (static_cast<unsigned char>(*c) < 0x20) throw std::logic_error("a control character in a peaks message");
  }
  return 0;
}
