#include "peaks/gpu_peaks.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_io.h"

namespace gpuscale {

extern const char* const kBuiltinGpuPeaks;  // generated from peaks/gpus.json

namespace {

using nlohmann::json;

constexpr const char* kFormat = "gpuscale-peaks";
constexpr std::uintmax_t kMaxPeaksBytes = 1ULL << 20;  // the largest --peaks file read (the built-in table is a few KiB)
constexpr int kVersion = 1;

class Parser {
 public:
  explicit Parser(std::string origin) : origin_(std::move(origin)) {}

  // `where` and `why` quote the file (model names, values) through terminal_quote: one safe line.
  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw Error(fmt::format("peaks file {}: {}{}", terminal_safe(origin_), where.empty() ? "" : where + ": ", why));
  }

  ExpectedPeak figure(const json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, "expected an object {\"value\": number or null, \"source\": text}");
    for (const auto& [k, v] : j.items())
      if (k != "value" && k != "source") fail(where, fmt::format("unknown field '{}'", terminal_quote(k)));
    if (!j.contains("source") || !j["source"].is_string() || j["source"].get<std::string>().empty())
      fail(where, "'source' must be a non-empty string saying where the figure comes from (or why it is unknown)");
    if (!j.contains("value")) fail(where, "'value' is missing (use null for an unknown figure)");
    ExpectedPeak p{std::nullopt, j["source"].get<std::string>()};
    const auto& v = j["value"];
    if (v.is_null()) return p;
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      fail(where, fmt::format("'value' must be a positive number or null, not {}", terminal_quote(v.dump())));
    p.value = v.get<double>();
    return p;
  }

  GpuModel model(const json& j, std::size_t index) const {
    const std::string at = fmt::format("models[{}]", index);
    if (!j.is_object()) fail(at, "expected an object");
    if (!j.contains("model") || !j["model"].is_string() || j["model"].get<std::string>().empty())
      fail(at, "'model' must be a non-empty string");
    GpuModel m;
    m.model = j["model"].get<std::string>();
    m.origin = origin_;
    const std::string where = fmt::format("{} ('{}')", at, terminal_quote(m.model));
    static const std::set<std::string> known = {"model", "names", "pci_device_id", "compute_capability", "sm_count",
                                                "memory_bandwidth", "compute", "nvlink", "nvlink_bridge", "pcie",
                                                "host_link", "notes"};
    for (const auto& [k, v] : j.items())
      if (!known.count(k)) fail(where, fmt::format("unknown field '{}'", terminal_quote(k)));
    if (!j.contains("names") || !j["names"].is_array() || j["names"].empty())
      fail(where, "'names' must be a non-empty array of device names as the driver reports them");
    for (const auto& n : j["names"]) {
      if (!n.is_string() || normalized_gpu_name(n.get<std::string>()).empty())
        fail(where, "every entry of 'names' must be a non-empty string");
      m.names.push_back(n.get<std::string>());
    }
    if (j.contains("pci_device_id")) {
      const auto& v = j["pci_device_id"];
      if (!v.is_string() || !(m.pci_device_id = cuda::parse_pci_id(v.get<std::string>())))
        fail(where, fmt::format("'pci_device_id' must be a hex string such as \"0x2335\", not {}", terminal_quote(v.dump())));
    }
    if (j.contains("compute_capability")) {
      const auto& v = j["compute_capability"];
      if (!v.is_string() || !(m.cc = cuda::parse_cc(v.get<std::string>())))
        fail(where, fmt::format("'compute_capability' must be a string such as \"9.0\", not {}", terminal_quote(v.dump())));
    }
    if (j.contains("sm_count")) {
      const auto& v = j["sm_count"];
      if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 100000)
        fail(where, fmt::format("'sm_count' must be a positive integer, not {}", terminal_quote(v.dump())));
      m.sm_count = v.get<int>();
    }
    if (!j.contains("memory_bandwidth")) fail(where, "'memory_bandwidth' is missing");
    m.memory_bandwidth = figure(j["memory_bandwidth"], where + ": memory_bandwidth");
    if (!j.contains("compute") || !j["compute"].is_object()) fail(where, "'compute' must be an object of dtype figures");
    for (const auto& [k, v] : j["compute"].items()) {
      const auto t = parse_dtype(k);
      if (!t || dtype_name(*t) != k)
        fail(where, fmt::format("compute: unknown dtype '{}' (use {})", terminal_quote(k), dtype_names_text()));
      m.compute[*t] = figure(v, fmt::format("{}: compute.{}", where, k));
    }
    for (const char* link : {"nvlink", "pcie"}) {
      if (!j.contains(link)) fail(where, fmt::format("'{}' is missing (use {{\"value\": null, \"source\": ...}})", link));
      (std::string(link) == "nvlink" ? m.nvlink : m.pcie) = figure(j[link], fmt::format("{}: {}", where, link));
    }
    if (j.contains("host_link")) m.host_link = figure(j["host_link"], where + ": host_link");
    if (j.contains("nvlink_bridge")) {
      if (!j["nvlink_bridge"].is_boolean()) fail(where, "'nvlink_bridge' must be true or false");
      m.nvlink_bridge = j["nvlink_bridge"].get<bool>();
    }
    return m;
  }

  std::vector<GpuModel> document(const std::string& text) const {
    // The strict reader of every input file (results/result_io.h): nesting at most kMaxJsonDepth (so
    // dump() in the messages cannot recurse without bound), no NaN, no key given twice.
    const json doc = parse_json_text(text, fmt::format("peaks file {}", terminal_safe(origin_)));
    if (!doc.is_object()) fail("", "expected a JSON object with \"format\", \"version\" and \"models\"");
    if (doc.value("format", std::string()) != kFormat)
      fail("", fmt::format("\"format\" must be \"{}\"", kFormat));
    if (!doc.contains("version") || doc["version"] != kVersion)
      fail("", fmt::format("\"version\" must be {} (this gpuscale reads version {})", kVersion, kVersion));
    if (!doc.contains("models") || !doc["models"].is_array()) fail("", "\"models\" must be an array");
    std::vector<GpuModel> out;
    std::map<std::string, std::string> seen;  // normalised name -> model
    for (std::size_t i = 0; i < doc["models"].size(); ++i) {
      auto m = model(doc["models"][i], i);
      for (const auto& n : m.names) {
        auto [it, fresh] = seen.emplace(normalized_gpu_name(n), m.model);
        if (!fresh) fail(fmt::format("models[{}] ('{}')", i, terminal_quote(m.model)),
                         fmt::format("name '{}' is already listed by model '{}'", terminal_quote(n),
                                     terminal_quote(it->second)));
      }
      out.push_back(std::move(m));
    }
    return out;
  }

 private:
  std::string origin_;
};

bool shares_name(const GpuModel& a, const GpuModel& b) {
  for (const auto& x : a.names)
    for (const auto& y : b.names)
      if (normalized_gpu_name(x) == normalized_gpu_name(y)) return true;
  return false;
}

}  // namespace

std::string normalized_gpu_name(std::string_view name) {
  auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  while (!name.empty() && space(name.front())) name.remove_prefix(1);
  while (!name.empty() && space(name.back())) name.remove_suffix(1);
  constexpr std::string_view kPrefix = "NVIDIA ";
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  while (!name.empty() && space(name.front())) name.remove_prefix(1);
  return std::string(name);
}

std::vector<GpuModel> parse_gpu_peaks(const std::string& text, const std::string& origin) {
  return Parser(origin).document(text);
}

std::vector<GpuModel> load_gpu_peaks_file(const std::string& path) {
  std::stringstream ss;
  try {
    auto in = open_input_file(path, kMaxPeaksBytes);  // a regular file of at most 1 MiB: not /dev/zero
    ss << in.rdbuf();
  } catch (const Error& e) {  // "<path>: no such file" and the like
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    throw Error(fmt::format("peaks file {}: cannot be read: {}", terminal_safe(path), why));
  }
  return parse_gpu_peaks(ss.str(), path);
}

const std::string& builtin_gpu_peaks_text() {
  static const std::string text = kBuiltinGpuPeaks;
  return text;
}

GpuPeakTable::GpuPeakTable(std::vector<GpuModel> builtin, std::vector<GpuModel> overrides)
    : models_(std::move(overrides)) {
  const std::size_t n_over = models_.size();
  for (auto& m : builtin) {
    bool replaced = false;
    for (std::size_t i = 0; i < n_over; ++i) replaced |= shares_name(m, models_[i]);
    if (!replaced) models_.push_back(std::move(m));
  }
}

GpuPeakTable::Match GpuPeakTable::find(const cuda::GpuIdentity& gpu) const {
  const std::string name = normalized_gpu_name(gpu.name);
  for (const auto& m : models_)
    for (const auto& n : m.names)
      if (normalized_gpu_name(n) == name) return {&m, fmt::format("name '{}'", gpu.name)};
  if (gpu.pci_device_id && gpu.cc && gpu.sm_count)
    for (const auto& m : models_)
      if (m.pci_device_id == gpu.pci_device_id && m.cc == gpu.cc && m.sm_count == gpu.sm_count)
        return {&m, fmt::format("PCI id {}, compute capability {}, {} SMs (name '{}' not listed)",
                                cuda::format_pci_id(*gpu.pci_device_id), cuda::format_cc(*gpu.cc), *gpu.sm_count,
                                gpu.name)};
  return {};
}

ExpectedPeak GpuPeakTable::figure(const DeviceInfo& device,
                                  const std::function<ExpectedPeak(const GpuModel&)>& pick) const {
  const auto match = find(cuda::gpu_identity(device));
  if (!match.model) return {std::nullopt, fmt::format("unknown GPU '{}' (add it with --peaks FILE)", device.name)};
  ExpectedPeak p = pick(*match.model);
  p.source = fmt::format("{} ({}; {}): {}", match.model->model, match.how, match.model->origin, p.source);
  return p;
}

ExpectedPeak GpuPeakTable::memory_bandwidth(const DeviceInfo& device) const {
  return figure(device, [](const GpuModel& m) { return m.memory_bandwidth; });
}

ExpectedPeak GpuPeakTable::compute(const DeviceInfo& device, DType type) const {
  return figure(device, [type](const GpuModel& m) -> ExpectedPeak {
    if (auto it = m.compute.find(type); it != m.compute.end()) return it->second;
    return {std::nullopt, fmt::format("no {} figure for this model in the peaks file", dtype_name(type))};
  });
}

ExpectedPeak GpuPeakTable::link_bandwidth(const DeviceInfo& device, LinkKind kind) const {
  return figure(device, [kind](const GpuModel& m) -> ExpectedPeak {
    switch (kind) {
      case LinkKind::nvlink: return m.nvlink;
      case LinkKind::pcie: return m.pcie;
      case LinkKind::host: return m.host_link ? *m.host_link : m.pcie;
      case LinkKind::peer:
        if (m.nvlink.value && !m.nvlink_bridge) return m.nvlink;
        return {m.pcie.value, m.nvlink_bridge ? "NVLink is an optional bridge on this model, so peers are set "
                                                "against PCIe (give --peaks to use the bridge): " + m.pcie.source
                                              : m.pcie.source};
    }
    return m.pcie;
  });
}

std::unique_ptr<GpuPeakTable> make_gpu_peak_table(const std::string& peaks_file) {
  auto builtin = parse_gpu_peaks(builtin_gpu_peaks_text(), "built-in peaks");
  std::vector<GpuModel> overrides;
  if (!peaks_file.empty()) overrides = load_gpu_peaks_file(peaks_file);
  return std::make_unique<GpuPeakTable>(std::move(builtin), std::move(overrides));
}

}  // namespace gpuscale
