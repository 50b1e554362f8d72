// nccl-tests' -J JSON (import/nccl_tests_json.h).
#include "import/nccl_tests_json.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "import/nccl_tests_rows.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// Every figure nccl-tests writes is "%lf": six decimals.
constexpr double kJsonResolution = 5e-7;

struct Reader {
  const ImportText& src;
  [[noreturn]] void fail(const std::string& pointer, std::string_view what) const {
    src.fail(0, fmt::format("{}: {}", pointer, what));
  }
  const json& need(const json& j, const char* key, const std::string& at) const {
    if (!j.is_object() || !j.contains(key)) fail(at, fmt::format("no \"{}\"", key));
    return j.at(key);
  }
  double number(const json& j, const char* key, const std::string& at) const {
    const json& v = need(j, key, at);
    if (!v.is_number() || v.get<double>() < 0) fail(at + "/" + key, fmt::format("{} is not a non-negative number", quote_input(v.dump())));
    return v.get<double>();
  }
  long long integer(const json& j, const char* key, const std::string& at) const {
    const json& v = need(j, key, at);
    if (!v.is_number_integer()) fail(at + "/" + key, fmt::format("{} is not an integer", quote_input(v.dump())));
    return v.get<long long>();
  }
  std::string text(const json& j, const char* key, const std::string& at) const {
    const json& v = need(j, key, at);
    if (!v.is_string()) fail(at + "/" + key, fmt::format("{} is not a string", quote_input(v.dump())));
    return v.get<std::string>();
  }
};

std::optional<NcclTestsHalf> half(const Reader& r, const json& row, const char* key, const std::string& at) {
  const json& h = r.need(row, key, at);
  if (h.is_null()) return std::nullopt;
  const std::string here = at + "/" + key;
  if (!h.is_object()) r.fail(here, "not an object");
  NcclTestsHalf out;
  out.cputime = h.contains("cpu_time");
  out.time_us = {r.number(h, out.cputime ? "cpu_time" : "time", here), kJsonResolution};
  out.algbw = {r.number(h, "alg_bw", here), kJsonResolution};
  out.busbw = {r.number(h, "bus_bw", here), kJsonResolution};
  const json& wrong = r.need(h, "nwrong", here);
  if (!wrong.is_null()) {
    if (!wrong.is_number() || wrong.get<double>() < 0 || std::floor(wrong.get<double>()) != wrong.get<double>())
      r.fail(here + "/nwrong", fmt::format("{} is not a count (or null)", quote_input(wrong.dump())));
    out.wrong = wrong.get<double>();
  }
  return out;
}

}  // namespace

bool looks_like_nccl_tests_json(const ImportText& src) {
  const auto& t = src.text();
  const auto b = t.find_first_not_of(" \t\r\n");
  return b != std::string::npos && t[b] == '{' && t.find("\"nccl_version\"") != std::string::npos;
}

ImportedInput read_nccl_tests_json(const ImportText& src) {
  const Reader r{src};
  const json doc = parse_json_text(src.text(), src.name());
  if (!doc.is_object()) r.fail("", "not a JSON object: not nccl-tests' -J output");
  ImportedInput in;
  in.file = src.name();
  in.format = "nccl-tests-json";
  in.tool = "nccl-tests";
  in.backend = "cuda";
  if (r.integer(doc, "version", "") != 1) r.fail("/version", fmt::format("JSON file version {}, this gpuscale reads version 1", doc.at("version").dump()));
  const json& args = r.need(doc, "args", "");
  if (!args.is_array() || args.empty()) r.fail("/args", "not the command line (a non-empty list of strings)");
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_string()) r.fail(fmt::format("/args/{}", i), "not a string");
    argv.push_back(args[i].get<std::string>());
  }
  in.command_line = argv;
  in.started = r.text(doc, "start_time", "");
  const auto code = r.integer(doc, "nccl_version", "");
  if (code >= 20900) in.software["nccl"] = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  in.missing.push_back("tool version: nccl-tests' JSON records its file version (1), not nccl-tests' own");
  const CollectiveSpec* spec = nccl_tests_collective(argv[0]);
  if (!spec) r.fail("/args/0", fmt::format("unknown collective {}: not a *_perf binary gpuscale measures", quote_input(argv[0])));

  const json& config = r.need(doc, "config", "");
  const json& devices = r.need(config, "devices", "/config");
  if (!devices.is_array() || devices.empty()) r.fail("/config/devices", "no devices: the output names no GPU");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string at = fmt::format("/config/devices/{}", i);
    ImportedRank k;
    k.rank = static_cast<int>(r.integer(devices[i], "rank", at));
    if (k.rank != static_cast<int>(i)) r.fail(at + "/rank", fmt::format("rank {} where rank {} was expected (devices are listed in rank order)", k.rank, i));
    k.pid = r.integer(devices[i], "pid", at);
    k.host = r.text(devices[i], "hostname", at);
    const auto dev = r.integer(devices[i], "device", at);
    if (dev < 0 || dev > 1 << 16) r.fail(at + "/device", fmt::format("device {} is not a GPU ordinal", dev));
    k.device = static_cast<int>(dev);
    k.pci_bus_id = r.text(devices[i], "device_hex", at);
    k.device_name = r.text(devices[i], "device_info", at);
    if (k.host.empty()) r.fail(at + "/hostname", "empty");
    in.ranks.push_back(std::move(k));
  }
  const auto iters = r.integer(config, "iterations", "/config");
  if (iters < 1) r.fail("/config/iterations", fmt::format("{} is not a positive count", iters));
  in.notes.push_back(fmt::format("iterations per size: {}", iters));

  const json& results = r.need(doc, "results", "");
  if (!results.is_array() || results.empty()) r.fail("/results", "no results: the run measured nothing (or the file was cut)");
  std::set<std::string> seen;
  double sum_bus = 0;
  std::size_t n_bus = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string at = fmt::format("/results/{}", i);
    const json& row = results[i];
    NcclTestsLine t;
    t.line = 0;
    const auto size = r.integer(row, "size", at), count = r.integer(row, "count", at);
    if (size < 0) r.fail(at + "/size", "negative");
    if (count < 0) r.fail(at + "/count", "negative");
    t.size_bytes = static_cast<unsigned long long>(size);
    t.count = static_cast<unsigned long long>(count);
    t.type = r.text(row, "type", at);
    t.redop = r.text(row, "redop", at);
    const auto root = parse_integer(trimmed(r.text(row, "root", at)));  // "%6i", a string
    if (!root) r.fail(at + "/root", fmt::format("{} is not a rank", quote_input(row.at("root").get<std::string>())));
    t.root = *root;
    t.out_of_place = half(r, row, "out_of_place", at);
    t.in_place = half(r, row, "in_place", at);
    if (!seen.insert(fmt::format("{}|{}|{}|{}", t.type, t.redop, t.root, t.size_bytes)).second)
      r.fail(at, fmt::format("size {} ({}) listed twice (nccl-tests -N repeats the sweep): import one sweep", t.size_bytes, t.type));
    for (const auto* h : {&t.out_of_place, &t.in_place})
      if (*h) sum_bus += (*h)->busbw.value, ++n_bus;
    // The shared checks name the row by its pointer: a JSON file has no line per row.
    add_nccl_tests_rows(in, *spec, t, ImportText(fmt::format("{}: {}", src.name(), at), "x"));
  }
  const json& avg = r.need(doc, "average_bus_bandwidth", "");
  const double bw = r.number(avg, "bandwidth", "/average_bus_bandwidth");
  const double mean = n_bus ? sum_bus / static_cast<double>(n_bus) : 0;
  if (std::fabs(mean - bw) > 1e-5 * std::max(1.0, bw))
    r.fail("/average_bus_bandwidth/bandwidth", fmt::format("{} is not the results' mean bus_bw {:.6f}: a result was cut, added or edited", bw, mean));
  const json& oob = r.need(doc, "out_of_bounds", "");
  if (const auto n = r.integer(oob, "count", "/out_of_bounds"); n > 0) in.notes.push_back(fmt::format("nccl-tests: {} out-of-bounds values (FAILED)", n));
  in.notes.push_back(fmt::format("nccl-tests' Avg bus bandwidth: {} GB/s", bw));
  note_nccl_tests_missing(in);
  return in;
}

}  // namespace gpuscale
