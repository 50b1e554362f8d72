#include "training/parallel_layout.h"

#include <charconv>
#include <set>

#include <fmt/format.h>

namespace gpuscale {
namespace {

constexpr int kMaxSize = 65536;

std::optional<int> size_of(std::string_view v) {
  int out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < 1 || out > kMaxSize) return std::nullopt;
  return out;
}

}  // namespace

std::string LayoutSpec::text() const {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  if (tp > 1) add(fmt::format("tp={}", tp));
  if (pp > 1) add(fmt::format("pp={}", pp));
  if (ep > 1) add(fmt::format("ep={}", ep));
  if (fsdp == 0) add("fsdp");
  else if (fsdp > 1) add(fmt::format("fsdp={}", fsdp));
  if (dp > 1) add(fmt::format("dp={}", dp));
  return out.empty() ? "dp" : out;
}

int LayoutSpec::fixed_product() const { return tp * pp * (dp > 0 ? dp : 1) * (fsdp > 0 ? fsdp : 1); }

std::optional<LayoutSpec> parse_layout(std::string_view text, std::string& why) {
  LayoutSpec s;
  bool dp_named = false, fsdp_named = false, dp_grows = false, fsdp_grows = false;
  std::set<std::string> seen;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::string_view item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    at = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    const std::size_t eq = item.find('=');
    const std::string name(item.substr(0, eq));
    if (!seen.insert(name).second) {
      why = fmt::format("'{}' is given twice", name);
      return std::nullopt;
    }
    std::optional<int> size;
    if (eq != std::string_view::npos) {
      size = size_of(item.substr(eq + 1));
      if (!size) {
        why = fmt::format("the size of '{}' is a whole number from 1 to {}", name, kMaxSize);
        return std::nullopt;
      }
    }
    if (name == "tp" || name == "pp" || name == "ep") {
      if (!size) {
        why = fmt::format("'{}' needs a size ({}=K)", name, name);
        return std::nullopt;
      }
      (name == "tp" ? s.tp : name == "pp" ? s.pp : s.ep) = *size;
    } else if (name == "dp") {
      dp_named = true;
      dp_grows = !size;
      s.dp = size.value_or(0);
    } else if (name == "fsdp") {
      fsdp_named = true;
      fsdp_grows = !size;
      s.fsdp = size.value_or(0);
    } else {
      why = fmt::format("unknown part '{}': a layout is a comma list of dp, fsdp, tp=K, pp=K, ep=K, dp=K, fsdp=K",
                        std::string(item));
      return std::nullopt;
    }
  }
  if (dp_grows && fsdp_grows) {
    why = "only one of dp and fsdp can take the GPUs the fixed sizes leave";
    return std::nullopt;
  }
  if (!dp_grows && !fsdp_grows) {
    if (dp_named && fsdp_named) {
      why = "one of dp and fsdp takes the GPUs the fixed sizes leave: name it without a size";
      return std::nullopt;
    }
    if (dp_named) {
      s.fsdp = 0;  // dp=K fixed: fsdp takes the rest
    } else {
      if (!fsdp_named) s.fsdp = 1;
      s.dp = 0;  // dp takes the rest
    }
  } else if (dp_grows) {
    s.dp = 0;
    if (!fsdp_named) s.fsdp = 1;
  } else {
    s.fsdp = 0;
    if (!dp_named) s.dp = 1;
  }
  return s;
}

std::optional<ParallelLayout> resolve_layout(const LayoutSpec& spec, int n) {
  const int fixed = spec.fixed_product();
  if (n < fixed || n % fixed != 0) return std::nullopt;
  ParallelLayout l;
  l.tp = spec.tp;
  l.pp = spec.pp;
  l.ep = spec.ep;
  l.dp = spec.dp > 0 ? spec.dp : n / fixed;
  l.fsdp = spec.fsdp > 0 ? spec.fsdp : n / fixed;
  if (l.data_parallel() % l.ep != 0) return std::nullopt;
  return l;
}

std::optional<std::string> layout_refusal(const LayoutSpec& spec, const ModelSpec& m, int largest, int gpus_per_node) {
  const std::string name = spec.text();
  const int fixed = spec.fixed_product();
  if (largest % fixed != 0)
    return fmt::format("layout {} takes {} GPUs per replica, which does not divide the launch's {} GPUs", name, fixed,
                       largest);
  if (spec.tp > gpus_per_node)
    return fmt::format("layout {}: tensor parallel {} spans more than a node ({} GPUs): its all-reduces would cross "
                       "the network on every layer",
                       name, spec.tp, gpus_per_node);
  if (spec.ep > 1 && !m.moe()) return fmt::format("layout {}: expert parallel needs an MoE model; {} is dense", name, m.name);
  if (m.moe() && m.experts % spec.ep != 0)
    return fmt::format("layout {}: {} experts do not divide over ep {}", name, m.experts, spec.ep);
  bool some = false;
  for (int n = 1; n <= largest && !some; ++n) some = resolve_layout(spec, n).has_value();
  if (!some)
    return fmt::format("layout {}: ep {} divides the data-parallel ranks at none of the launch's GPU counts", name,
                       spec.ep);
  const auto tp = static_cast<std::uint64_t>(spec.tp);
  if (m.heads % spec.tp != 0) return fmt::format("layout {}: tp {} does not divide {} heads", name, spec.tp, m.heads);
  if (m.kv_heads % spec.tp != 0 && spec.tp % m.kv_heads != 0)
    return fmt::format("layout {}: tp {} neither divides nor is a multiple of {} KV heads", name, spec.tp, m.kv_heads);
  if (m.ffn % tp != 0 || m.vocab % tp != 0)
    return fmt::format("layout {}: tp {} does not divide the MLP width {} and vocabulary {}", name, spec.tp, m.ffn,
                       m.vocab);
  if (m.layers % spec.pp != 0) return fmt::format("layout {}: pp {} does not divide {} layers", name, spec.pp, m.layers);
  return std::nullopt;
}

LayoutPlace layout_place(const ParallelLayout& l, int rank) {
  LayoutPlace p;
  const int d_all = l.data_parallel();
  p.tp_rank = rank % l.tp;
  const int d = (rank / l.tp) % d_all;
  p.pp_rank = rank / (l.tp * d_all);
  p.fsdp_rank = d % l.fsdp;
  p.dp_rank = d / l.fsdp;
  p.ep_rank = d % l.ep;
  return p;
}

int layout_group_size(const ParallelLayout& l, LayoutDim dim) {
  switch (dim) {
    case LayoutDim::tp: return l.tp;
    case LayoutDim::fsdp: return l.fsdp;
    case LayoutDim::dp: return l.dp;
    case LayoutDim::ep: return l.ep;
    case LayoutDim::expert_dp: return l.data_parallel() / l.ep;
    case LayoutDim::pp: return l.pp;
  }
  return 1;
}

int layout_group_rank(const ParallelLayout& l, int rank, LayoutDim dim) {
  const LayoutPlace p = layout_place(l, rank);
  switch (dim) {
    case LayoutDim::tp: return p.tp_rank;
    case LayoutDim::fsdp: return p.fsdp_rank;
    case LayoutDim::dp: return p.dp_rank;
    case LayoutDim::ep: return p.ep_rank;
    case LayoutDim::expert_dp: return ((rank / l.tp) % l.data_parallel()) / l.ep;
    case LayoutDim::pp: return p.pp_rank;
  }
  return 0;
}

// The rank with `dim`'s coordinate set to 0 names the group: every member maps to it.
int layout_colour(const ParallelLayout& l, int rank, LayoutDim dim) {
  const LayoutPlace p = layout_place(l, rank);
  const int d_all = l.data_parallel();
  const int d = (rank / l.tp) % d_all;
  int tp = p.tp_rank, dd = d, pp = p.pp_rank;
  switch (dim) {
    case LayoutDim::tp: tp = 0; break;
    case LayoutDim::fsdp: dd = d - p.fsdp_rank; break;
    case LayoutDim::dp: dd = p.fsdp_rank; break;
    case LayoutDim::ep: dd = d - p.ep_rank; break;
    case LayoutDim::expert_dp: dd = p.ep_rank; break;
    case LayoutDim::pp: pp = 0; break;
  }
  return tp + l.tp * (dd + d_all * pp);
}

}  // namespace gpuscale
