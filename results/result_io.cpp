#include "results/result_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <streambuf>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_file.h"
#include "results/result_schema.h"
#include "results/result_upgrade.h"

namespace gpuscale {

namespace fs = std::filesystem;

namespace {


// The checks after parsing that make a document a result of a version read; it comes out version 2.
nlohmann::json check_result_doc(nlohmann::json doc, const std::string& name) {
  (void)result_schema_version(doc, name);
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", name, problems));
  return upgrade_result_document(std::move(doc), name);
}

}  // namespace

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
  // access() says yes to root everywhere, and /sys or a read-only mount still refuse a new file: make
  // (and remove) the temporary file the writes will make, so the refusal comes now, exit 2, not after
  // the measurements.
  std::string probe = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw Error(fmt::format("cannot write results to '{}': cannot create a file in '{}' ({})", path.string(),
                            dir.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
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

std::ifstream open_input_file(const fs::path& path, std::uintmax_t max_bytes) {
  const std::string name = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(fmt::format("{}: no such file", name));
  if (fs::is_directory(path, ec)) throw Error(fmt::format("{}: is a directory, not a file", name));
  if (!fs::is_regular_file(path, ec))  // a device (/dev/zero), pipe or socket: no size, and maybe no end
    throw Error(fmt::format("{}: not a regular file", name));
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(fmt::format("{}: cannot read: {}", name, ec.message()));
  if (size == 0) throw Error(fmt::format("{}: empty file", name));
  if (size > max_bytes)
    throw Error(fmt::format("{}: {} bytes is larger than any file gpuscale writes (limit {})", name, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  return in;
}

nlohmann::json read_json_file(const fs::path& path, std::uintmax_t max_bytes) {
  auto in = open_input_file(path, max_bytes);
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), path.string());
}

namespace {

// nlohmann's lexer takes a NUL byte for the end of its input (it reads C strings too), so a good
// document, a NUL, then anything at all read as that one document. No NUL is valid anywhere in JSON (in a
// string it must be escaped), so the first one is refused where it lies, whatever follows it.
[[noreturn]] void refuse_nul(const std::string& name, std::uintmax_t offset) {
  throw Error(fmt::format("{}: not valid JSON (a NUL byte at byte {}; only whitespace may follow the document)",
                          name, offset));
}

// A stream read through this stops before its first NUL byte and refuses it when the parser asks for it.
class NulRefusingBuf : public std::streambuf {
 public:
  NulRefusingBuf(std::streambuf* source, const std::string& name) : source_(source), name_(name) {}

 protected:
  int_type underflow() override {
    if (nul_at_) refuse_nul(name_, *nul_at_);
    char* buf = buf_.data();
    const auto n = source_->sgetn(buf, static_cast<std::streamsize>(buf_.size()));
    if (n <= 0) return traits_type::eof();
    auto end = static_cast<std::size_t>(n);
    if (const void* nul = std::memchr(buf, '\0', end)) {
      end = static_cast<std::size_t>(static_cast<const char*>(nul) - buf);
      nul_at_ = read_ + end;
      if (end == 0) refuse_nul(name_, *nul_at_);
    }
    read_ += static_cast<std::uintmax_t>(n);
    setg(buf, buf, buf + end);
    return traits_type::to_int_type(buf[0]);
  }

 private:
  std::streambuf* source_;
  const std::string& name_;
  std::vector<char> buf_ = std::vector<char>(1 << 16);
  std::uintmax_t read_ = 0;                // bytes taken from the source
  std::optional<std::uintmax_t> nul_at_;  // where the first NUL lies, once seen
};

// The strict parse of any input nlohmann reads (text, a stream): nesting at most kMaxJsonDepth (refused
// at the first level too deep, before it is built), no key twice in one object, and each complete
// element of the top-level "results" array handed to `hook` and dropped when a hook is given.
template <typename Input>
nlohmann::json parse_strict(Input&& input, const std::string& name, const ResultsElementHook& hook) {
  using E = nlohmann::json::parse_event_t;
  // The keys seen in each object being parsed (innermost last), to refuse a key given twice.
  struct Open {
    std::set<std::string> keys;
    std::string under;  // the key this object is the value of ("" at the top or in an array)
  };
  std::vector<Open> open;
  std::string last_key, top_key;
  bool in_results = false;
  std::size_t element = 0;
  auto watch = [&](int depth, E event, nlohmann::json& parsed) {
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxJsonDepth)
      throw Error(fmt::format("{}: JSON nested deeper than {} levels", name, kMaxJsonDepth));
    if (event == E::object_start) {
      open.push_back({{}, last_key});
      last_key.clear();
    } else if (event == E::key) {
      last_key = parsed.get<std::string>();
      if (depth == 1) top_key = last_key;
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
    if (!hook || open.size() != 1 || depth > 2) return true;
    if (depth == 1 && event == E::array_start) in_results = top_key == "results";
    else if (depth == 1 && event == E::array_end) in_results = false;
    else if (depth == 2 && in_results && (event == E::object_end || event == E::array_end || event == E::value)) {
      hook(parsed, element++);
      return false;  // dropped: the document keeps an empty "results"
    }
    return true;
  };
  try {
    return nlohmann::json::parse(std::forward<Input>(input), watch);  // NaN, Infinity, out-of-range numbers: errors
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", name, terminal_safe(e.what())));
  }
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& name, const ResultsElementHook& hook) {
  if (text.empty()) throw Error(fmt::format("{}: empty file", name));
  if (const auto at = text.find('\0'); at != std::string::npos) refuse_nul(name, at);
  return parse_strict(text, name, hook);
}

nlohmann::json parse_json_stream(std::istream& in, const std::string& name, const ResultsElementHook& hook) {
  NulRefusingBuf guarded(in.rdbuf(), name);
  std::istream guarded_in(&guarded);
  return parse_strict(guarded_in, name, hook);
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
