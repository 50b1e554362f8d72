#include "core/fault_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/host_name.h"

namespace gpuscale {
namespace {

// The other items, read where they act (fault_injected, the store): "kind:target" or a bare word.
constexpr std::string_view kTargetItems[] = {"wrong:", "fail:", "stall:", "setup-fail:", "telemetry:"};
constexpr std::string_view kBareItems[] = {"store-pause", "store-slow"};

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

bool number(std::string_view text, double& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(out);
}

bool index_of(std::string_view text, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && out >= 0 && out < (1 << 20);
}

std::string known_kinds() {
  std::string out;
  for (const auto& k : fault_kinds())
    if (k.has_item()) out += fmt::format("{}, ", item_syntax(k));
  return out + fmt::format("{}, {}", fmt::join(kTargetItems, ", "), fmt::join(kBareItems, ", "));
}

// The table kind whose item `item` is ("name:..."), or null.
const FaultKindInfo* item_kind(std::string_view item) {
  for (const auto& k : fault_kinds())
    if (k.has_item() && item.size() > k.name.size() && item.substr(0, k.name.size()) == k.name && item[k.name.size()] == ':')
      return &k;
  return nullptr;
}

// Parsed by the kind's fields (ItemField, ItemNumber): HOST, the field if it has one, the number.
TimingFault parse_item(const FaultKindInfo& k, std::string_view item) {
  const auto syntax = item_syntax(k);
  auto bad = [&](std::string_view why) {
    return Error(fmt::format("invalid {} item '{}': {} (use {})", "GPUSCALE_TEST_FAULT", item, why, syntax));
  };
  TimingFault f;
  f.kind = k.kind;
  f.item = std::string(item);
  const auto fields = split(item.substr(k.name.size() + 1), ':');
  const bool optional = k.field == ItemField::optional_gpu;
  const std::size_t want = k.field == ItemField::none ? 2 : 3;
  if (!(fields.size() == want || (optional && fields.size() == 2)))
    throw bad(fmt::format("{} fields after '{}:', expected {}", fields.size(), k.name, optional ? "2 or 3" : std::to_string(want)));
  if (!is_host_name(fields[0])) throw bad("the host is not a host name (letters, digits, '-', '.', '_')");
  f.host = std::string(fields[0]);
  if (k.number == ItemNumber::rate) {
    if (!number(fields.back(), f.probability) || !(f.probability > 0) || f.probability > 1)
      throw bad("the rate is not a number in (0, 1]");
  } else {
    if (!number(fields.back(), f.factor)) throw bad("the factor is not a finite number");
    if (!(f.factor > 1)) throw bad("the factor must be greater than 1");
  }
  if (fields.size() < 3) return f;
  const auto mid = fields[1];
  switch (k.field) {
    case ItemField::none:
      break;
    case ItemField::optional_gpu:
    case ItemField::gpu:
      if (!index_of(mid, f.index)) throw bad("the GPU is not an index (0, 1, ...)");
      break;
    case ItemField::rail:
      if (!index_of(mid, f.index)) throw bad("the rail is not an index (0, 1, ...)");
      break;
    case ItemField::gpu_pair: {
      const auto ab = split(mid, '-');
      if (ab.size() != 2 || !index_of(ab[0], f.index) || !index_of(ab[1], f.peer))
        throw bad("the GPU pair is not A-B of two indices (0-1, ...)");
      if (f.index == f.peer) throw bad("the GPU pair names one GPU twice");
      break;
    }
    case ItemField::probability:
      if (!number(mid, f.probability) || f.probability < 0 || f.probability > 1)
        throw bad("the probability is not a number in [0, 1]");
      break;
    case ItemField::seconds:
      if (!number(mid, f.after_s) || f.after_s < 0) throw bad("the seconds are not a number >= 0");
      break;
  }
  return f;
}

// The ranks of its host an item acts on follow from its field: the GPU, rail or pair it names, else all.
bool acts_on(const TimingFault& f, std::string_view host, int local_index) {
  if (f.host != host) return false;
  switch (fault_kind_info(f.kind).field) {
    case ItemField::optional_gpu:
      return f.index < 0 || f.index == local_index;
    case ItemField::gpu:
    case ItemField::rail:
      return f.index == local_index;
    case ItemField::gpu_pair:
      return f.index == local_index || f.peer == local_index;
    case ItemField::none:
    case ItemField::probability:
    case ItemField::seconds:
      return true;
  }
  return true;
}

}  // namespace

std::vector<TimingFault> parse_timing_faults(std::string_view fault_list) {
  std::vector<TimingFault> out;
  if (fault_list.empty()) return out;
  for (const auto item : split(fault_list, ',')) {
    if (item.empty())
      throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT '{}': an empty item (items are separated by one comma)", fault_list));
    const FaultKindInfo* kind = item_kind(item);
    if (kind == nullptr) {
      const bool other = std::any_of(std::begin(kTargetItems), std::end(kTargetItems),
                                     [&](std::string_view p) { return item.size() > p.size() && item.substr(0, p.size()) == p; }) ||
                         std::find(std::begin(kBareItems), std::end(kBareItems), item) != std::end(kBareItems);
      if (!other) throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT item '{}': not a known fault kind ({})", item, known_kinds()));
      continue;
    }
    auto f = parse_item(*kind, item);
    for (const auto& o : out)
      if (o.kind == f.kind && o.host == f.host && o.index == f.index && o.peer == f.peer)
        throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT item '{}': it repeats '{}'", item, o.item));
    out.push_back(std::move(f));
  }
  return out;
}

void check_fault_places(const std::vector<TimingFault>& faults, const std::vector<std::string>& hosts) {
  for (const auto& f : faults) {
    const auto ranks = std::count(hosts.begin(), hosts.end(), f.host);
    if (ranks == 0)
      throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT item '{}': no rank of the job runs on host '{}'", f.item, f.host));
    const int top = std::max(f.index, f.peer);
    if (top >= ranks)
      throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT item '{}': host '{}' runs {} rank(s) (local indices 0 to {}), "
                              "not {}", f.item, f.host, ranks, ranks - 1, top));
  }
}

std::vector<TimingFault> faults_of_rank(const std::vector<TimingFault>& faults, std::string_view host, int local_index) {
  std::vector<TimingFault> out;
  for (const auto& f : faults)
    if (acts_on(f, host, local_index)) out.push_back(f);
  return out;
}

PlantedFactors planted_factors(const std::vector<TimingFault>& faults, std::string_view host, int local_index,
                               const WorkPlace& work, double elapsed_s, const std::vector<double>& draws) {
  PlantedFactors p;
  std::size_t flaky = 0;
  const auto holds = [&](int i) { return std::find(work.local_peers.begin(), work.local_peers.end(), i) != work.local_peers.end(); };
  for (const auto& f : faults) {
    if (f.kind == FaultKind::flaky) ++flaky;  // counted for every flaky item, so the draws keep their order
    if (!acts_on(f, host, local_index)) continue;
    switch (f.kind) {
      case FaultKind::slow_host:
        p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case FaultKind::slow_gpu:
        p.compute *= f.factor;
        break;
      case FaultKind::slow_mem:
        p.memory *= f.factor;
        break;
      case FaultKind::slow_nic:
        if (work.leaves_host) p.comm *= f.factor;
        break;
      case FaultKind::slow_link:
        if (!work.leaves_host && holds(f.index) && holds(f.peer)) p.comm *= f.factor;
        break;
      case FaultKind::flaky:
        if (flaky <= draws.size() && draws[flaky - 1] < f.probability)
          p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case FaultKind::throttle_after:
        if (elapsed_s >= f.after_s) p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case FaultKind::slow_host_reported:
        break;  // reported, not spent: reported_factor
      case FaultKind::flip_bit:
        break;  // corrupts, does not slow: flip_bit_due (core/fault.h)
      case FaultKind::slow_storage:
        break;  // no item of its own: a run plants it as slow-host
    }
  }
  return p;
}

double reported_factor(const std::vector<TimingFault>& faults, std::string_view host) {
  double f = 1;
  for (const auto& x : faults)
    if (x.kind == FaultKind::slow_host_reported && x.host == host) f *= x.factor;
  return f;
}

}  // namespace gpuscale
