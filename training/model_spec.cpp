#include "training/model_spec.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

// --quick's shrink: width / kQuickWidth, at most kQuickLayers layers, kQuickSeq tokens.
constexpr std::uint64_t kQuickWidth = 16, kQuickSeq = 128;
constexpr int kQuickLayers = 2;

ModelSpec preset(std::string name, int layers, std::uint64_t hidden, std::uint64_t ffn, int heads, int kv_heads,
                 std::uint64_t seq, std::uint64_t vocab, int experts, int top_k, std::string layout, std::string source) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.seq = seq;
  m.micro_batch = 1;
  m.vocab = vocab;
  m.experts = experts;
  m.top_k = top_k;
  m.layout = std::move(layout);
  m.source = std::move(source);
  return m;
}

const std::array<ModelSpec, 3>& presets() {
  static const std::array<ModelSpec, 3> p = {
      preset("llama3-8b", 32, 4096, 14336, 32, 8, 8192, 128256, 0, 0, "",
             "Meta Llama 3 8B config.json (hidden_size 4096, intermediate_size 14336, 32 layers, 32 heads, 8 KV "
             "heads, vocab 128256); sequence 8192 and micro-batch 1 as torchtitan's Llama 3.1 8B recipe"),
      preset("llama3-70b", 80, 8192, 28672, 64, 8, 8192, 128256, 0, 0, "tp=8",
             "Meta Llama 3 70B config.json (hidden_size 8192, intermediate_size 28672, 80 layers, 64 heads, 8 KV "
             "heads, vocab 128256), tensor parallel 8 within a node as Meta trained it"),
      preset("mixtral-8x7b", 32, 4096, 14336, 32, 8, 4096, 32000, 8, 2, "",
             "Mistral AI Mixtral 8x7B config.json (hidden_size 4096, intermediate_size 14336 per expert, 32 layers, "
             "32 heads, 8 KV heads, vocab 32000, 8 experts, top-2 routing); sequence 4096"),
  };
  return p;
}

std::uint64_t positive(const nlohmann::json& j, const char* key, const std::string& what) {
  if (!j.contains(key)) throw Error(fmt::format("{}: the model lacks \"{}\"", what, key));
  const auto& v = j.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > (std::int64_t{1} << 31))
    throw Error(fmt::format("{}: \"{}\" must be a whole number from 1 to 2^31", what, key));
  return static_cast<std::uint64_t>(v.get<std::int64_t>());
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> out;
  for (const auto& p : presets()) out.push_back(p.name);
  return out;
}

std::optional<ModelSpec> model_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  return std::nullopt;
}

ModelSpec model_from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw Error(fmt::format("{}: a model is a JSON object of its shapes", what));
  static const std::array<const char*, 13> known = {"name",  "layers", "hidden", "ffn",     "heads", "kv_heads", "seq",
                                                    "micro_batch", "vocab", "dtype", "experts", "top_k", "source"};
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw Error(fmt::format("{}: unknown model field \"{}\"", what, key));
  ModelSpec m;
  m.name = "file";
  m.layers = static_cast<int>(positive(j, "layers", what));
  m.hidden = positive(j, "hidden", what);
  m.ffn = positive(j, "ffn", what);
  m.heads = static_cast<int>(positive(j, "heads", what));
  m.kv_heads = j.contains("kv_heads") ? static_cast<int>(positive(j, "kv_heads", what)) : m.heads;
  m.seq = positive(j, "seq", what);
  m.micro_batch = j.contains("micro_batch") ? positive(j, "micro_batch", what) : 1;
  m.vocab = positive(j, "vocab", what);
  if (j.contains("dtype")) {
    if (!j["dtype"].is_string()) throw Error(fmt::format("{}: \"dtype\" must be a type name", what));
    const auto t = parse_dtype(j["dtype"].get<std::string>());
    if (!t) throw Error(fmt::format("{}: unknown dtype in the model", what));
    m.dtype = *t;
  }
  if (j.contains("experts") || j.contains("top_k")) {
    m.experts = static_cast<int>(positive(j, "experts", what));
    m.top_k = static_cast<int>(positive(j, "top_k", what));
  }
  if (j.contains("source") && j["source"].is_string()) m.source = j["source"].get<std::string>();
  if (auto why = model_refusal(m)) throw Error(fmt::format("{}: {}", what, *why));
  return m;
}

std::optional<std::string> model_refusal(const ModelSpec& m) {
  if (m.layers < 1 || m.hidden == 0 || m.ffn == 0 || m.heads < 1 || m.kv_heads < 1 || m.seq == 0 ||
      m.micro_batch == 0 || m.vocab == 0)
    return std::string("every size of a model is at least 1");
  if (m.hidden % static_cast<std::uint64_t>(m.heads) != 0)
    return fmt::format("{} heads do not divide the hidden size {}", m.heads, m.hidden);
  if (m.heads % m.kv_heads != 0) return fmt::format("{} KV heads do not divide {} heads", m.kv_heads, m.heads);
  if (m.experts < 0 || (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)))
    return fmt::format("top_k {} is not between 1 and the {} experts", m.top_k, m.experts);
  return std::nullopt;
}

ModelSpec shrink_model(ModelSpec m, bool quick, std::optional<int> layers) {
  auto note = [&](const char* key, auto before, auto after) {
    if (before != after) m.shrink[key] = before;
  };
  if (quick) {
    const auto narrow = [](std::uint64_t v) { return std::max<std::uint64_t>(1, v / kQuickWidth); };
    const int heads = static_cast<int>(narrow(static_cast<std::uint64_t>(m.heads)));
    // KV heads keep their ratio to the heads where they can, and always divide them.
    int kv = std::max(1, m.kv_heads * heads / m.heads);
    while (heads % kv != 0) --kv;
    // The width stays a multiple of the heads (head_dim a whole number).
    const auto uh = static_cast<std::uint64_t>(heads);
    const std::uint64_t new_hidden = std::max(uh, narrow(m.hidden) / uh * uh);
    note("hidden", m.hidden, new_hidden);
    note("ffn", m.ffn, narrow(m.ffn));
    note("heads", m.heads, heads);
    note("kv_heads", m.kv_heads, kv);
    note("vocab", m.vocab, narrow(m.vocab));
    note("layers", m.layers, std::min(m.layers, kQuickLayers));
    note("seq", m.seq, std::min(m.seq, kQuickSeq));
    note("micro_batch", m.micro_batch, std::uint64_t{1});
    m.hidden = new_hidden;
    m.ffn = narrow(m.ffn);
    m.heads = heads;
    m.kv_heads = kv;
    m.vocab = narrow(m.vocab);
    m.layers = std::min(m.layers, kQuickLayers);
    m.seq = std::min(m.seq, kQuickSeq);
    m.micro_batch = 1;
  }
  if (layers) {
    if (!m.shrink.contains("layers") && *layers != m.layers) m.shrink["layers"] = m.layers;
    m.layers = *layers;
  }
  return m;
}

std::uint64_t attention_params(const ModelSpec& m) {
  const std::uint64_t kv = static_cast<std::uint64_t>(m.kv_heads) * m.head_dim();
  return m.hidden * (m.hidden + 2 * kv) + m.hidden * m.hidden;  // Q, K, V, then the output projection
}

std::uint64_t mlp_params(const ModelSpec& m) { return 3 * m.hidden * m.ffn; }
std::uint64_t router_params(const ModelSpec& m) { return m.moe() ? m.hidden * static_cast<std::uint64_t>(m.experts) : 0; }

double active_params(const ModelSpec& m) {
  const double mlps = m.moe() ? m.top_k : 1;
  const double layer = static_cast<double>(attention_params(m)) + static_cast<double>(router_params(m)) +
                       mlps * static_cast<double>(mlp_params(m));
  return m.layers * layer + static_cast<double>(m.hidden * m.vocab);
}

double total_params(const ModelSpec& m) {
  const double mlps = m.moe() ? m.experts : 1;
  const double layer = static_cast<double>(attention_params(m)) + static_cast<double>(router_params(m)) +
                       mlps * static_cast<double>(mlp_params(m));
  return m.layers * layer + 2.0 * static_cast<double>(m.hidden * m.vocab);  // embedding and output
}

double train_flops_per_token(const ModelSpec& m) {
  return 6 * active_params(m) + 12.0 * m.layers * static_cast<double>(m.hidden) * static_cast<double>(m.seq);
}

nlohmann::json model_json(const ModelSpec& m) {
  nlohmann::json j = {{"name", m.name},   {"layers", m.layers}, {"hidden", m.hidden},
                      {"ffn", m.ffn},     {"heads", m.heads},   {"kv_heads", m.kv_heads},
                      {"seq", m.seq},     {"micro_batch", m.micro_batch}, {"vocab", m.vocab},
                      {"dtype", dtype_name(m.dtype)}};
  if (m.moe()) {
    j["experts"] = m.experts;
    j["top_k"] = m.top_k;
  }
  if (!m.shrink.empty()) j["shrunk_from"] = m.shrink;
  return j;
}

ModelSpec model_from_point(const nlohmann::json& params, const std::string& what) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string())
    throw Error(fmt::format("{}: a train-step point names its model", what));
  nlohmann::json shapes = params;
  for (const char* k : {"layout", "name", "shrunk_from", "scaling", "global_dp"}) shapes.erase(k);
  ModelSpec m = model_from_json(shapes, what);
  m.name = params["name"].get<std::string>();
  const auto shrink = params.find("shrunk_from");
  if (shrink != params.end() && shrink->is_object()) m.shrink = *shrink;
  return m;
}

double checkpoint_bytes_per_param(DType dtype) {
  const double weight = static_cast<double>(dtype_size(dtype));
  return weight + (weight < 4 ? 4 : 0) + 8;  // the weights, an fp32 master when narrower, Adam's m and v
}

double checkpoint_bytes(const ModelSpec& m) { return total_params(m) * checkpoint_bytes_per_param(m.dtype); }

}  // namespace gpuscale
