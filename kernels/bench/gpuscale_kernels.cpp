// gpuscale-kernels: single-device micro-benchmarks of the same kernels, GEMMs and copies `gpuscale run`
// measures, as a Google Benchmark executable, so users get its standard flags (--benchmark_filter,
// --benchmark_repetitions, --benchmark_format=json ...). Each iteration is timed by the device's own
// clock (CUDA events on a GPU) and reported with SetIterationTime; counters give bytes/s and FLOP/s.
// Every result is verified once per benchmark; a wrong result is reported as an error, never a rate.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/device.h"
#ifdef GPUSCALE_HAVE_CUDA
#include "kernels/cuda/cuda_device.h"
#endif

namespace gpuscale {
namespace {

struct Flags {
  std::string backend = "auto";
  int device = 0;
  std::optional<std::uint64_t> array_bytes;
  std::vector<GemmShape> gemm_shapes;
  std::vector<DType> dtypes;
  std::uint64_t copy_bytes = 256ULL << 20;
  std::uint64_t seed = 0;
};

constexpr const char* kUsage = R"(gpuscale-kernels options (besides Google Benchmark's --benchmark_*):
  --backend=cpu|cuda|auto   device to measure (auto: the first GPU when one is visible, else the CPU)
  --device=N                CUDA ordinal (default 0)
  --array-size=SIZE         STREAM bytes per array (default: the device's default, 8x L2 / 4x LLC)
  --gemm-shapes=LIST        N or MxNxK[:TN] (default 4096,8192 on a GPU, 1024 on the CPU)
  --dtypes=LIST             only these element types
  --copy-size=SIZE          bytes per copy (default 256M; GPU only)
  --seed=N                  seed of the random inputs (default: random, printed in the context)
)";

// Takes gpuscale's own flags out of argv (Google Benchmark rejects flags it does not know).
Flags parse_own_flags(int* argc, char** argv) {
  Flags f;
  std::random_device rd;
  f.seed = ((std::uint64_t{rd()} << 32) ^ rd()) & ((1ULL << 53) - 1);
  const std::map<std::string, std::function<void(const std::string&)>> handlers = {
      {"--backend",
       [&](const std::string& v) {
         if (v != "cpu" && v != "cuda" && v != "auto") throw Error(fmt::format("invalid --backend '{}'", v));
         f.backend = v;
       }},
      {"--device",
       [&](const std::string& v) {
         char* end = nullptr;
         const long d = std::strtol(v.c_str(), &end, 10);
         if (v.empty() || *end != '\0' || d < 0 || d > 4096)
           throw Error(fmt::format("invalid --device '{}': expected a CUDA ordinal (0, 1, ...)", v));
         f.device = static_cast<int>(d);
       }},
      {"--array-size", [&](const std::string& v) { f.array_bytes = parse_size(v, "--array-size"); }},
      {"--gemm-shapes",
       [&](const std::string& v) {
         for (const auto& s : split_list(v, "--gemm-shapes")) f.gemm_shapes.push_back(parse_gemm_shape(s));
       }},
      {"--dtypes", [&](const std::string& v) { f.dtypes = parse_dtype_list(v); }},
      {"--copy-size", [&](const std::string& v) { f.copy_bytes = parse_size(v, "--copy-size"); }},
      {"--seed", [&](const std::string& v) { f.seed = static_cast<std::uint64_t>(parse_positive(v, "--seed")); }},
  };
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const auto it = handlers.find(arg.substr(0, eq));
    if (it == handlers.end()) {
      if (arg == "--help" || arg == "-h") std::fputs(kUsage, stdout);
      argv[out++] = argv[i];  // Google Benchmark's (or unknown: it reports those)
      continue;
    }
    if (eq == std::string::npos && i + 1 >= *argc) throw Error(fmt::format("{} needs a value", arg));
    it->second(eq == std::string::npos ? std::string(argv[++i]) : arg.substr(eq + 1));
  }
  *argc = out;
  return f;
}

std::unique_ptr<Device> open_device(const Flags& f) {
#ifdef GPUSCALE_HAVE_CUDA
  std::string why;
  const bool gpu = f.backend != "cpu" && cuda_device_count(&why) > 0;
  if (f.backend == "cuda" && !gpu) throw Error(fmt::format("no CUDA device: {}", why), kExitNoDevice);
  if (gpu) return make_cuda_device({f.device, "--device"});
#else
  if (f.backend == "cuda")
    throw Error("no CUDA device: this gpuscale-kernels was built without the CUDA backend", kExitNoDevice);
#endif
  return make_cpu_device({0, 1});
}

bool wanted(const Flags& f, DType t) {
  return f.dtypes.empty() || std::find(f.dtypes.begin(), f.dtypes.end(), t) != f.dtypes.end();
}

// One live object at a time per kind (arrays of one dtype, one GEMM, one copy), so device memory holds
// only what the current benchmark needs; created (and warmed up) on first use.
template <typename T>
class Slot {
 public:
  T& get(const std::string& key, const std::function<std::unique_ptr<T>()>& make) {
    if (key != key_ || !obj_) {
      obj_.reset();
      obj_ = make();
      key_ = key;
    }
    return *obj_;
  }

 private:
  std::string key_;
  std::unique_ptr<T> obj_;
};

bool g_wrong = false;

// The timing loop every benchmark shares: one warm-up, device-timed iterations, the rate counters,
// then (once per benchmark) the check of the result.
void measure(benchmark::State& state, const std::function<double()>& once, double bytes, double flops,
             const std::string& name, const std::function<CheckResult()>& check) {
  static std::set<std::string> verified;
  once();  // warm-up
  double total = 0;
  for (auto _ : state) {
    const double s = once();
    state.SetIterationTime(s);
    total += s;
  }
  const double iters = static_cast<double>(state.iterations());
  if (total > 0) {
    if (bytes > 0) state.counters["bytes/s"] = benchmark::Counter(bytes * iters / total);
    if (flops > 0) state.counters["FLOP/s"] = benchmark::Counter(flops * iters / total);
  }
  if (verified.insert(name).second) {
    const auto r = check();
    if (r.wrong > 0) {
      g_wrong = true;
      state.SkipWithError(("verification failed: " + r.detail).c_str());
    }
  }
}

template <typename F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    g_wrong = true;
    state.SkipWithError(e.what());
  }
}

void register_all(Device& dev, const Flags& f) {
  static Slot<StreamArrays> stream_slot;
  static Slot<GemmProblem> gemm_slot;
  static Slot<CopyTransfer> copy_slot;

  const std::uint64_t array_bytes = f.array_bytes.value_or(dev.default_stream_array_bytes());
  for (DType t : dev.stream_dtypes()) {
    if (!wanted(f, t)) continue;
    const std::uint64_t n = array_bytes / dtype_size(t);
    for (StreamOp op : dev.stream_ops()) {
      const auto name = fmt::format("stream.{}/{}/{}", stream_spec(op).name, dtype_name(t), format_size(n * dtype_size(t)));
      benchmark::RegisterBenchmark(name.c_str(), [&dev, &f, t, n, op, name](benchmark::State& state) {
        guarded(state, [&] {
          // Fresh arrays per kernel: each kernel's check assumes the random inputs, which other kernels overwrite.
          auto& arrays = stream_slot.get(name,
                                         [&] { return dev.make_stream(t, n, f.seed); });
          measure(state, [&] { return arrays.run(op); }, static_cast<double>(stream_bytes(op, n, dtype_size(t))), 0,
                  name, [&] { return arrays.verify(op); });
        });
      })->UseManualTime();
    }
  }

  const bool gpu = dev.info().backend == "cuda";
  std::vector<GemmShape> shapes = f.gemm_shapes;
  if (shapes.empty())
    for (std::uint64_t s : gpu ? std::vector<std::uint64_t>{4096, 8192} : std::vector<std::uint64_t>{1024})
      shapes.push_back({s, s, s, false, false});
  for (DType t : dev.gemm_dtypes()) {
    if (!wanted(f, t)) continue;
    if (auto why = dev.gemm_unsupported(t)) {
      fmt::print(stderr, "gpuscale-kernels: no gemm/{}: {}\n", dtype_name(t), *why);
      continue;
    }
    for (GemmShape s : shapes) {
      s = gemm_shape_for(t, s);
      if (auto why = dev.gemm_shape_unsupported(t, s)) {
        fmt::print(stderr, "gpuscale-kernels: no gemm/{}/{}: {}\n", dtype_name(t), format_gemm_shape(s), *why);
        continue;
      }
      const auto name = fmt::format("gemm/{}/{}", dtype_name(t), format_gemm_shape(s));
      benchmark::RegisterBenchmark(name.c_str(), [&dev, &f, t, s, name](benchmark::State& state) {
        guarded(state, [&] {
          auto& g = gemm_slot.get(name, [&] { return dev.make_gemm(t, s, f.seed); });
          measure(state, [&] { return g.run(); }, 0, gemm_flops(s), name, [&] { return g.verify(); });
          state.SetLabel(g.details().value("library", std::string()));
        });
      })->UseManualTime();
    }
  }

  if (CopyEngine* copies = dev.copies()) {
    const std::uint64_t size = copy_size_rounded(f.copy_bytes);
    for (const auto& spec : kCopyCases) {
      std::vector<CopyCase> cases;
      if (!spec.peer) {
        cases.push_back({spec.kind, size, 1, PeerDirection::write, PeerMode::all_pairs, f.seed});
      } else {
        for (int off = 1; off < copies->visible_gpus(); ++off)
          for (auto dir : {PeerDirection::write, PeerDirection::read}) cases.push_back({spec.kind, size, off, dir, PeerMode::all_pairs, f.seed});
      }
      for (const auto& c : cases) {
        if (auto why = copies->unavailable(c)) {
          fmt::print(stderr, "gpuscale-kernels: no copy.{}: {}\n", spec.name, *why);
          continue;
        }
        const auto name = spec.peer ? fmt::format("copy.{}/{}/+{}/{}", spec.name, peer_direction_name(c.direction),
                                                  c.peer_offset, format_size(size))
                                    : fmt::format("copy.{}/{}", spec.name, format_size(size));
        benchmark::RegisterBenchmark(name.c_str(), [copies, c, name](benchmark::State& state) {
          guarded(state, [&] {
            auto& x = copy_slot.get(name, [&] { return copies->make(c); });
            measure(state, [&] { return x.run(); }, static_cast<double>(copy_bytes_counted(c.kind, c.size_bytes)), 0,
                    name, [&] { return x.verify(); });
          });
        })->UseManualTime();
      }
    }
  }
}

}  // namespace
}  // namespace gpuscale

int main(int argc, char** argv) {
  using namespace gpuscale;
  try {
    static Flags flags = parse_own_flags(&argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kExitUsage;
    static std::unique_ptr<Device> dev = open_device(flags);
    const auto& info = dev->info();
    benchmark::AddCustomContext("gpuscale.device", fmt::format("{} ({})", info.name, info.backend));
    benchmark::AddCustomContext("gpuscale.seed", std::to_string(flags.seed));
    benchmark::AddCustomContext("gpuscale.details", info.details.dump());
    register_all(*dev, flags);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuscale-kernels: %s\n", e.what());
    return e.exit_code();
  }
  return g_wrong ? kExitInvalidResult : kExitOk;
}
