#include "core/fault_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/host_name.h"

namespace gpuscale {
namespace {

struct KindSyntax {
  TimingFaultKind kind;
  std::string_view name, syntax;
};
constexpr KindSyntax kKinds[] = {
    {TimingFaultKind::slow_host, "slow-host", "slow-host:HOST:F"},
    {TimingFaultKind::slow_gpu, "slow-gpu", "slow-gpu:HOST[:GPU]:F"},
    {TimingFaultKind::slow_mem, "slow-mem", "slow-mem:HOST[:GPU]:F"},
    {TimingFaultKind::slow_nic, "slow-nic", "slow-nic:HOST:RAIL:F"},
    {TimingFaultKind::slow_link, "slow-link", "slow-link:HOST:A-B:F"},
    {TimingFaultKind::flaky, "flaky", "flaky:HOST:P:F"},
    {TimingFaultKind::throttle_after, "throttle-after", "throttle-after:HOST:SECONDS:F"},
    {TimingFaultKind::slow_host_reported, "slow-host-reported", "slow-host-reported:HOST:F"},
    {TimingFaultKind::flip_bit, "flip-bit", "flip-bit:HOST:GPU:RATE"},
};
// The other kinds, read where they act (fault_injected, the store): "kind:target" or a bare word.
constexpr std::string_view kTargetKinds[] = {"wrong:", "fail:", "stall:", "setup-fail:", "telemetry:"};
constexpr std::string_view kBareKinds[] = {"store-pause", "store-slow"};

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
  for (const auto& k : kKinds) out += fmt::format("{}, ", k.syntax);
  return out + "wrong:, fail:, stall:, setup-fail:, telemetry:, store-pause, store-slow";
}

TimingFault parse_item(const KindSyntax& k, std::string_view item) {
  auto bad = [&](std::string_view why) {
    return Error(fmt::format("invalid {} item '{}': {} (use {})", "GPUSCALE_TEST_FAULT", item, why, k.syntax));
  };
  TimingFault f;
  f.kind = k.kind;
  f.item = std::string(item);
  const auto fields = split(item.substr(k.name.size() + 1), ':');
  if (k.kind == TimingFaultKind::flip_bit) {  // a rate, not a factor
    if (fields.size() != 3) throw bad(fmt::format("{} fields after 'flip-bit:', expected 3", fields.size()));
    if (!is_host_name(fields[0])) throw bad("the host is not a host name (letters, digits, '-', '.', '_')");
    f.host = std::string(fields[0]);
    if (!index_of(fields[1], f.index)) throw bad("the GPU is not an index (0, 1, ...)");
    if (!number(fields[2], f.probability) || !(f.probability > 0) || f.probability > 1)
      throw bad("the rate is not a number in (0, 1]");
    return f;
  }
  const bool optional_gpu = k.kind == TimingFaultKind::slow_gpu || k.kind == TimingFaultKind::slow_mem;
  const bool two = k.kind == TimingFaultKind::slow_host || k.kind == TimingFaultKind::slow_host_reported;
  const std::size_t want = two ? 2 : 3;
  if (!(fields.size() == want || (optional_gpu && fields.size() == 2)))
    throw bad(fmt::format("{} fields after '{}:', expected {}", fields.size(), k.name, optional_gpu ? "2 or 3" : std::to_string(want)));
  if (!is_host_name(fields[0])) throw bad("the host is not a host name (letters, digits, '-', '.', '_')");
  f.host = std::string(fields[0]);
  if (!number(fields.back(), f.factor)) throw bad("the factor is not a finite number");
  if (!(f.factor > 1)) throw bad("the factor must be greater than 1");
  if (fields.size() == 3) {
    const auto mid = fields[1];
    switch (k.kind) {
      case TimingFaultKind::slow_gpu:
      case TimingFaultKind::slow_mem:
      case TimingFaultKind::slow_nic:
        if (!index_of(mid, f.index)) throw bad("the GPU or rail is not an index (0, 1, ...)");
        break;
      case TimingFaultKind::slow_link: {
        const auto ab = split(mid, '-');
        if (ab.size() != 2 || !index_of(ab[0], f.index) || !index_of(ab[1], f.peer))
          throw bad("the GPU pair is not A-B of two indices (0-1, ...)");
        if (f.index == f.peer) throw bad("the GPU pair names one GPU twice");
        break;
      }
      case TimingFaultKind::flaky:
        if (!number(mid, f.probability) || f.probability < 0 || f.probability > 1)
          throw bad("the probability is not a number in [0, 1]");
        break;
      case TimingFaultKind::throttle_after:
        if (!number(mid, f.after_s) || f.after_s < 0) throw bad("the seconds are not a number >= 0");
        break;
      default:
        break;
    }
  }
  return f;
}

bool acts_on(const TimingFault& f, std::string_view host, int local_index) {
  if (f.host != host) return false;
  switch (f.kind) {
    case TimingFaultKind::slow_gpu:
    case TimingFaultKind::slow_mem:
      return f.index < 0 || f.index == local_index;
    case TimingFaultKind::slow_nic:
    case TimingFaultKind::flip_bit:
      return f.index == local_index;
    case TimingFaultKind::slow_link:
      return f.index == local_index || f.peer == local_index;
    default:
      return true;
  }
}

}  // namespace

std::vector<TimingFault> parse_timing_faults(std::string_view fault_list) {
  std::vector<TimingFault> out;
  if (fault_list.empty()) return out;
  for (const auto item : split(fault_list, ',')) {
    if (item.empty())
      throw Error(fmt::format("invalid GPUSCALE_TEST_FAULT '{}': an empty item (items are separated by one comma)", fault_list));
    const KindSyntax* kind = nullptr;
    for (const auto& k : kKinds)  // the longest name first would matter only for prefixes: match name + ':'
      if (item.size() > k.name.size() && item.substr(0, k.name.size()) == k.name && item[k.name.size()] == ':') kind = &k;
    if (kind == nullptr) {
      const bool other = std::any_of(std::begin(kTargetKinds), std::end(kTargetKinds),
                                     [&](std::string_view p) { return item.size() > p.size() && item.substr(0, p.size()) == p; }) ||
                         std::find(std::begin(kBareKinds), std::end(kBareKinds), item) != std::end(kBareKinds);
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
    if (f.kind == TimingFaultKind::flaky) ++flaky;  // counted for every flaky item, so the draws keep their order
    if (!acts_on(f, host, local_index)) continue;
    switch (f.kind) {
      case TimingFaultKind::slow_host:
        p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case TimingFaultKind::slow_gpu:
        p.compute *= f.factor;
        break;
      case TimingFaultKind::slow_mem:
        p.memory *= f.factor;
        break;
      case TimingFaultKind::slow_nic:
        if (work.leaves_host) p.comm *= f.factor;
        break;
      case TimingFaultKind::slow_link:
        if (!work.leaves_host && holds(f.index) && holds(f.peer)) p.comm *= f.factor;
        break;
      case TimingFaultKind::flaky:
        if (flaky <= draws.size() && draws[flaky - 1] < f.probability)
          p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case TimingFaultKind::throttle_after:
        if (elapsed_s >= f.after_s) p.compute *= f.factor, p.memory *= f.factor, p.comm *= f.factor;
        break;
      case TimingFaultKind::slow_host_reported:
        break;  // reported, not spent: reported_factor
      case TimingFaultKind::flip_bit:
        break;  // corrupts, does not slow: flip_bit_due (core/fault.h)
    }
  }
  return p;
}

double reported_factor(const std::vector<TimingFault>& faults, std::string_view host) {
  double f = 1;
  for (const auto& x : faults)
    if (x.kind == TimingFaultKind::slow_host_reported && x.host == host) f *= x.factor;
  return f;
}

}  // namespace gpuscale
