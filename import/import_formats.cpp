// The peer formats by name (import/import_formats.h).
#include "import/import_formats.h"

#include <fmt/format.h>

#include "import/babelstream.h"
#include "import/import_text.h"
#include "import/nccl_tests_json.h"
#include "import/nccl_tests_text.h"
#include "import/nvbandwidth.h"

namespace gpuscale {
namespace {

struct Format {
  std::string name;
  bool (*looks_like)(const ImportText&);
  ImportedInput (*read)(const ImportText&, const ImportOptions&);
};

// In the order auto tries them: JSON and CSV first, whose first characters decide.
const std::vector<Format>& formats() {
  static const std::vector<Format> all = {
      {"nvbandwidth-json", looks_like_nvbandwidth_json, [](const ImportText& t, const ImportOptions&) { return read_nvbandwidth_json(t); }},
      {"nccl-tests-json", looks_like_nccl_tests_json, [](const ImportText& t, const ImportOptions&) { return read_nccl_tests_json(t); }},
      {"babelstream-csv", looks_like_babelstream_csv,
       [](const ImportText& t, const ImportOptions& o) { return read_babelstream_csv(t, o.backend); }},
      {"babelstream", looks_like_babelstream_text,
       [](const ImportText& t, const ImportOptions& o) { return read_babelstream_text(t, o.backend); }},
      {"nccl-tests", looks_like_nccl_tests_text,
       [](const ImportText& t, const ImportOptions& o) { return read_nccl_tests_text(t, o.collective); }},
      {"nvbandwidth", looks_like_nvbandwidth_text, [](const ImportText& t, const ImportOptions&) { return read_nvbandwidth_text(t); }},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& import_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& f : formats()) n.push_back(f.name);
    return n;
  }();
  return names;
}

ImportedInput read_import_file(const std::string& path, const ImportOptions& opts) {
  const ImportText text(path);
  for (const auto& f : formats())
    if (opts.format == f.name || (opts.format == "auto" && f.looks_like(text))) return f.read(text, opts);
  if (opts.format != "auto") text.fail(0, fmt::format("unknown format {}", quote_input(opts.format)));
  text.fail(0, fmt::format("not output of a tool gpuscale imports ({}): pass --format to say which it is", fmt::join(import_format_names(), ", ")));
}

}  // namespace gpuscale
