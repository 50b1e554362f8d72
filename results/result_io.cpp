#include "results/result_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_file.h"

namespace gpuscale {

extern const char* const kResultSchemaV1;  // generated from results/schema/result-v1.schema.json

namespace fs = std::filesystem;

namespace {

// Result files are small (megabytes); anything far larger is refused before parsing.
constexpr std::uintmax_t kMaxResultBytes = 256ULL << 20;

const valijson::Schema& schema() {
  static const std::unique_ptr<valijson::Schema> s = [] {
    auto sch = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser;
    const auto doc = nlohmann::json::parse(kResultSchemaV1);
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, *sch);
    return sch;
  }();
  return *s;
}

// Deepest nesting of arrays and objects, scanning the text (strings skipped) without recursion.
int json_nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// The checks after parsing that make a document a version-1 result.
nlohmann::json check_result_doc(nlohmann::json doc, const std::string& name) {
  if (!doc.is_object()) throw Error(fmt::format("{}: not a gpuscale result (top level is not an object)", name));
  if (!doc.contains("schema") || !doc["schema"].is_string() || doc["schema"].get<std::string>() != kResultSchemaName)
    throw Error(fmt::format("{}: not a gpuscale result (\"schema\" is not \"{}\")", name, kResultSchemaName));
  const auto& v = doc.value("schema_version", nlohmann::json());
  if (!v.is_number_integer() || v.get<long long>() != kResultSchemaVersion)
    throw Error(fmt::format("{}: unsupported schema_version {} (this gpuscale reads version {})", name,
                            v.dump().substr(0, 40), kResultSchemaVersion));
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", name, problems));
  return doc;
}

}  // namespace

const std::string& result_schema_text() {
  static const std::string text = kResultSchemaV1;
  return text;
}

void check_output_path(const fs::path& path) {
  if (path.empty()) throw Error("output path is empty");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(fmt::format("cannot write results to '{}': directory '{}' does not exist", path.string(), dir.string()));
  if (fs::is_directory(path, ec))
    throw Error(fmt::format("cannot write results to '{}': it is a directory", path.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(fmt::format("cannot write results to '{}': directory '{}' is not writable ({})", path.string(),
                            dir.string(), std::strerror(errno)));
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw Error(fmt::format("cannot write results to '{}': the file is not writable ({})", path.string(),
                            std::strerror(errno)));
}

void write_file_atomic(const fs::path& path, const std::string& text, bool replace) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)), 1);
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)), 1);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)), 1);
  }
  if (!replace) {
    // link() fails with EEXIST rather than replace: no window where an existing file is clobbered.
    const int rc = ::link(tmpl.c_str(), path.c_str());
    const int err = errno;
    ::unlink(tmpl.c_str());
    if (rc != 0 && err == EEXIST)
      throw Error(fmt::format("{}: already exists (use --force to replace it)", path.string()));
    if (rc != 0) throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)), 1);
    return;
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)), 1);
  }
}

std::string validate_result_json(const nlohmann::json& doc) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  if (validator.validate(schema(), adapter, &results)) return "";
  // The deepest error is the most specific; report up to three.
  std::string out;
  valijson::ValidationResults::Error err;
  int shown = 0;
  std::vector<valijson::ValidationResults::Error> errors;
  while (results.popError(err)) errors.push_back(err);
  std::stable_sort(errors.begin(), errors.end(),
                   [](const auto& a, const auto& b) { return a.context.size() > b.context.size(); });
  for (const auto& e : errors) {
    std::string where;
    for (const auto& c : e.context) where += c;
    out += fmt::format("{}{}: {}", shown ? "; " : "", where, e.description);
    if (++shown == 3) break;
  }
  return terminal_safe(out);  // the pointers quote the file's keys
}

nlohmann::json read_json_file(const fs::path& path, std::uintmax_t max_bytes) {
  const std::string name = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(fmt::format("{}: no such file", name));
  if (fs::is_directory(path, ec)) throw Error(fmt::format("{}: is a directory, not a file", name));
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(fmt::format("{}: cannot read: {}", name, ec.message()));
  if (size == 0) throw Error(fmt::format("{}: empty file", name));
  if (size > max_bytes)
    throw Error(fmt::format("{}: {} bytes is larger than any file gpuscale writes (limit {})", name, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), name);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& name) {
  if (text.empty()) throw Error(fmt::format("{}: empty file", name));
  // Deep nesting is refused before parsing: copying or printing a deep document recurses.
  if (auto depth = json_nesting_depth(text); depth > kMaxJsonDepth)
    throw Error(fmt::format("{}: JSON nested deeper than {} levels", name, kMaxJsonDepth));
  // The keys seen in each object being parsed (innermost last), to refuse a key given twice.
  struct Open {
    std::set<std::string> keys;
    std::string under;  // the key this object is the value of ("" at the top or in an array)
  };
  std::vector<Open> open;
  std::string last_key;
  auto watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      open.push_back({{}, last_key});
      last_key.clear();
    } else if (event == E::key) {
      last_key = parsed.get<std::string>();
      if (!open.back().keys.insert(last_key).second)
        throw Error(fmt::format("{}: duplicate key \"{}\"{}: refused (which copy counts is ambiguous)", name,
                                terminal_quote(last_key),
                                open.back().under.empty() ? std::string()
                                                          : fmt::format(" in the object \"{}\"", terminal_quote(open.back().under))));
    } else if (event == E::object_end) {
      open.pop_back();
      last_key.clear();
    } else if (event == E::array_start || event == E::value) {
      last_key.clear();
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, watch);  // NaN, Infinity and out-of-range numbers are parse errors
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", name, terminal_safe(e.what())));
  }
}

nlohmann::json read_result_file(const fs::path& path) {
  const std::string name = path.string();
  return check_result_doc(read_json_file(path, kMaxResultBytes), name);
}

nlohmann::json parse_result_text(const std::string& text, const std::string& name) {
  if (text.size() > kMaxResultBytes)
    throw Error(fmt::format("{}: {} bytes is larger than any file gpuscale writes (limit {})", name, text.size(),
                            kMaxResultBytes));
  return check_result_doc(parse_json_text(text, name), name);
}

}  // namespace gpuscale
