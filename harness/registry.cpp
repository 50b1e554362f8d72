#include "harness/registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

bool runs_on(const Benchmark& b, const std::string& backend) {
  const auto bk = b.backends();
  return std::find(bk.begin(), bk.end(), backend) != bk.end();
}

}  // namespace

void Registry::add(std::unique_ptr<Benchmark> b) { benchmarks_.push_back(std::move(b)); }

const Benchmark* Registry::find(const std::string& key) const {
  for (const auto& b : benchmarks_)
    if (b->key() == key) return b.get();
  return nullptr;
}

std::vector<std::string> Registry::groups() const {
  std::vector<std::string> out;
  for (const auto& b : benchmarks_)
    if (std::find(out.begin(), out.end(), b->group()) == out.end()) out.push_back(b->group());
  return out;
}

std::string Registry::groups_text() const {
  std::string all, opt_in;
  for (const auto& g : groups()) {
    const bool opt = std::all_of(benchmarks_.begin(), benchmarks_.end(), [&](const auto& b) { return b->group() != g || b->info().opt_in; });
    std::string& list = opt ? opt_in : all;
    list += (list.empty() ? "" : ", ") + g;
  }
  return opt_in.empty() ? all : all + "; " + opt_in + " only when named";
}

void Registry::check_names(const std::vector<std::string>& names) const {
  for (const auto& name : names) {
    if (name == "all") continue;
    bool known = false;
    for (const auto& b : benchmarks_) known |= b->key() == name || b->group() == name;
    if (known) continue;
    std::string keys;
    for (const auto& b : benchmarks_) keys += (keys.empty() ? "" : ", ") + b->key();
    throw Error(fmt::format("unknown benchmark '{}' (known: {}; groups: {})", name, keys, groups_text()));
  }
}

std::vector<const Benchmark*> Registry::select(const std::vector<std::string>& names, const std::string& backend,
                                               const Device* device) const {
  auto runs_here = [&](const Benchmark& b) { return runs_on(b, backend) && (device == nullptr || b.available(*device)); };
  std::vector<const Benchmark*> out;
  if (names.empty() || std::find(names.begin(), names.end(), "all") != names.end()) {
    // Everything but the opt-in benchmarks (the fleet group), unless they are named too ("all,fleet").
    auto named = [&](const Benchmark& b) {
      return std::find(names.begin(), names.end(), b.key()) != names.end() ||
             std::find(names.begin(), names.end(), b.group()) != names.end();
    };
    for (const auto& b : benchmarks_)
      if (runs_here(*b) && (!b->info().opt_in || named(*b))) out.push_back(b.get());
    return out;
  }
  for (const auto& name : names) {
    bool matched = false;
    for (const auto& b : benchmarks_) {
      if (b->key() != name && b->group() != name) continue;
      matched = true;
      if (!runs_here(*b)) {
        if (b->key() == name)
          throw Error(device != nullptr && runs_on(*b, backend)
                          ? fmt::format("benchmark '{}' is not available on this {} device", name, backend)
                          : fmt::format("benchmark '{}' does not run on the {} backend (see gpuscale list)", name, backend));
        continue;
      }
      if (std::find(out.begin(), out.end(), b.get()) == out.end()) out.push_back(b.get());
    }
    if (!matched) check_names({name});
  }
  // Keep registry order whatever order the user typed.
  std::vector<const Benchmark*> ordered;
  for (const auto& b : benchmarks_)
    if (std::find(out.begin(), out.end(), b.get()) != out.end()) ordered.push_back(b.get());
  return ordered;
}

bool Registry::whole_job(const std::string& key) const {
  const Benchmark* b = find(key);
  return b != nullptr && b->info().whole_job;
}

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_stream_benchmarks(reg);
    register_gemm_benchmarks(reg);
    register_copy_benchmarks(reg);
    register_collective_benchmarks(reg);
    register_training_benchmarks(reg);
    register_train_step_benchmark(reg);
    register_fleet_benchmarks(reg);
    register_burn_benchmarks(reg);
    register_checkpoint_benchmarks(reg);
    return reg;
  }();
  return r;
}

}  // namespace gpuscale
