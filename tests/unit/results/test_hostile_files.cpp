// Every reader of a file that travels between teams, given each class of bad file: empty, truncated,
// wrong types, NaN/Infinity, negative or zero values, an unknown schema version, deep nesting, very
// large strings and arrays, invalid UTF-8, duplicate keys. Each bad file is refused with a
// gpuscale::Error naming the problem (never another exception, never a crash); each large but valid
// one is read and its strings reach the outputs escaped. The readers: result files (validate, and every
// command's first step), the analysis loader (report, compare), the reference reader (check), merge and
// resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "tests/fuzz/readers.h"
#include "text/escape.h"
#include "core/error.h"
#include "result_doc.h"
#include "results/result_stream.h"

namespace gpuscale {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The readers, each from the text of one file to whatever it produces (tests/fuzz/readers.h, which
// the fuzz targets drive too); the other file they meet is a minimal valid run.
void read_result(const std::string& text) { readers::result_file(text); }

void analyse(const std::string& text) {
  readers::report(text);
  readers::compare(text, testing_doc::minimal_result_doc());
}

void merge(const std::string& text) { readers::merge(text, testing_doc::minimal_result_doc()); }

void resume(const std::string& text) { readers::resume(text); }

void read_reference(const std::string& text) { readers::reference(text, testing_doc::minimal_result_doc()); }

struct Reader {
  const char* name;
  std::function<void(const std::string&)> read;
  bool reference;  // reads reference files, not result files
};

const std::vector<Reader>& readers() {
  static const std::vector<Reader> r = {{"result file", read_result, false},
                                        {"analysis (report, compare)", analyse, false},
                                        {"merge", merge, false},
                                        {"resume", resume, false},
                                        {"reference (check)", read_reference, true}};
  return r;
}

// A resumable, complete result document and a matching reference, the valid starting points.
json valid_result() {
  json d = testing_doc::minimal_result_doc();
  d["plan"]["options"] = plan_options_json(RunOptions{});
  d["plan"]["point_list"] = {{{"benchmark", "stream.triad"}, {"params", d["results"][0]["params"]}}};
  // Complete: the point at both of its GPU counts (1 and 2).
  auto one = testing_doc::sample_row();
  one.gpu_count = 1;
  one.topology = "single";
  one.ranks.resize(1);
  one.aggregate = one.ranks[0].value;
  d["results"].push_back(json(one));
  d["summary"]["rows"] = d["summary"]["ok"] = 2;
  return d;
}

json valid_reference() {
  return {{"schema", "gpuscale.reference"},
          {"schema_version", 1},
          {"clusters",
           {{{"cluster", "testcluster"},
             {"entries",
              {{{"benchmark", "stream.*"}, {"params", {{"dtype", "fp64"}}}, {"gpu_count", "*"}, {"value", 200},
                {"lower", 0.1}, {"upper", nullptr}, {"unit", "GB/s"}}}}}}}};
}

// `mutate` applied to the valid document of the reader's kind, as text.
std::string bad(const Reader& r, const std::function<void(json&)>& mutate) {
  json d = r.reference ? valid_reference() : valid_result();
  mutate(d);
  return d.dump();
}

// The reader refuses `text` with a gpuscale::Error whose message holds `needle`.
void expect_refused(const Reader& r, const std::string& text, const std::string& needle, const std::string& what) {
  try {
    r.read(text);
    ADD_FAILURE() << r.name << " accepted " << what;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << r.name << ", " << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << r.name << ", " << what << ": not a gpuscale::Error: " << e.what();
  }
}

TEST(HostileFiles, ValidFilesAreRead) {
  for (const auto& r : readers())
    EXPECT_NO_THROW(r.read((r.reference ? valid_reference() : valid_result()).dump())) << r.name;
}

TEST(HostileFiles, EmptyAndTruncated) {
  for (const auto& r : readers()) {
    expect_refused(r, "", "empty", "an empty file");
    const std::string text = (r.reference ? valid_reference() : valid_result()).dump(1);
    for (std::size_t cut : {std::size_t{1}, text.size() / 3, text.size() / 2, text.size() - 1})
      expect_refused(r, text.substr(0, cut), "not valid JSON", "a file cut at " + std::to_string(cut));
  }
}

TEST(HostileFiles, WrongTypes) {
  for (const auto& r : readers()) {
    if (r.reference) {
      expect_refused(r, bad(r, [](json& d) { d["clusters"] = "alpha"; }), "ref.json", "clusters as a string");
      expect_refused(r, bad(r, [](json& d) { d["clusters"][0]["entries"][0]["value"] = "200"; }), "ref.json",
                     "a value as a string");
      expect_refused(r, bad(r, [](json& d) { d["clusters"][0]["entries"][0]["gpu_count"] = true; }), "ref.json",
                     "gpu_count as a bool");
      expect_refused(r, "[]", "ref.json", "an array");
      continue;
    }
    expect_refused(r, bad(r, [](json& d) { d["mpi"]["world_size"] = "2"; }), "does not match the result schema",
                   "world_size as a string");
    expect_refused(r, bad(r, [](json& d) { d["results"] = json::object(); }), "does not match the result schema",
                   "results as an object");
    expect_refused(r, bad(r, [](json& d) { d["results"][0]["ranks"]["stats"] = 3; }),
                   "does not match the result schema", "stats as a number");
    expect_refused(r, bad(r, [](json& d) { d["results"][0]["ranks"] = json::array(); }),
                   "does not match the result schema", "a version-1 ranks array in a version-2 file");
    expect_refused(r, bad(r, [](json& d) { d["schema"] = 5; }), "not a gpuscale result", "schema as a number");
    expect_refused(r, "[1, 2]", "not a gpuscale result", "an array");
    expect_refused(r, "\"text\"", "not a gpuscale result", "a string");
  }
}

TEST(HostileFiles, NanInfinityAndOutOfRangeNumbers) {
  for (const auto& r : readers()) {
    const std::string text = (r.reference ? valid_reference() : valid_result()).dump();
    const std::string number = r.reference ? "200" : "12345";  // the reference's value, the plan's seed
    const auto at = text.find(number);
    ASSERT_NE(at, std::string::npos);
    for (const char* replacement : {"NaN", "Infinity", "-Infinity", "nan", "1e999", "-1e999"}) {
      std::string t = text;
      t.replace(at, number.size(), replacement);
      expect_refused(r, t, "not valid JSON", replacement);
    }
  }
}

TEST(HostileFiles, NegativeAndZeroValues) {
  for (const auto& r : readers()) {
    if (r.reference) {
      expect_refused(r, bad(r, [](json& d) { d["clusters"][0]["entries"][0]["value"] = -1; }), "ref.json", "a negative value");
      expect_refused(r, bad(r, [](json& d) { d["clusters"][0]["entries"][0]["lower"] = -0.5; }), "ref.json",
                     "a negative tolerance");
      expect_refused(r, bad(r, [](json& d) { d["clusters"][0]["entries"][0]["gpu_count"] = 0; }), "ref.json", "gpu_count 0");
      continue;
    }
    const std::vector<std::pair<std::string, std::function<void(json&)>>> cases = {
        {"world_size 0", [](json& d) { d["mpi"]["world_size"] = 0; }},
        {"gpu_count -1", [](json& d) { d["results"][0]["gpu_count"] = -1; }},
        {"aggregate -5", [](json& d) { d["results"][0]["aggregate"] = -5.0; }},
        {"seed -1", [](json& d) { d["plan"]["seed"] = -1; }},
        {"expected_peak 0", [](json& d) { d["results"][0]["expected_peak"] = 0; }},
        {"gpu_counts [0]", [](json& d) { d["plan"]["gpu_counts"] = {0}; }}};
    for (const auto& [what, mutate] : cases) expect_refused(r, bad(r, mutate), "does not match the result schema", what);
  }
  // The analysis loader also refuses negative row metrics the schema allows (a time, a size).
  expect_refused(readers()[1], bad(readers()[1], [](json& d) { d["results"][0]["metrics"]["time_us"] = -3; }),
                 "must be a non-negative number", "a negative time_us");
}

TEST(HostileFiles, UnknownSchemaVersion) {
  for (const auto& r : readers()) {
    for (const json& v : {json(3), json(0), json("1"), json(1.5), json(nullptr), json(-2)}) {
      const auto text = bad(r, [&](json& d) { d["schema_version"] = v; });
      expect_refused(r, text, r.reference ? "schema_version" : v == json(3) ? "schema_version 3 is newer" : "unsupported schema_version",
                     "schema_version " + v.dump());
    }
    if (r.reference) continue;
    // A newer file is named as such even when its rows are of a shape this gpuscale does not know.
    const auto text = bad(r, [&](json& d) {
      d["schema_version"] = 4;
      d["results"][0]["ranks"] = "columns of the future";
    });
    expect_refused(r, text, "schema_version 4 is newer than this gpuscale (reads 1 and 2)", "a version-4 file");
  }
}

// Columns of a version-2 row the schema cannot tie together: lengths that differ from the ranks', host
// indices past ranks.hosts. Refused naming the column by every reader that converts rows (resume keeps
// rows as they are).
TEST(HostileFiles, MisalignedColumns) {
  const std::vector<std::pair<std::string, std::function<void(json&)>>> cases = {
      {"ranks/value", [](json& d) { d["results"][0]["ranks"]["value"].push_back(1.0); }},
      {"ranks/valid", [](json& d) { d["results"][0]["ranks"]["valid"] = {true}; }},
      {"ranks/metrics/bytes_per_pass", [](json& d) { d["results"][0]["ranks"]["metrics"]["bytes_per_pass"] = {1, 2, 3}; }},
      {"ranks/host", [](json& d) { d["results"][0]["ranks"]["host"] = 5; }},
      {"ranks/stats/median", [](json& d) {
         d["results"][0]["ranks"]["stats"] = {{"n", {1, 1}}, {"median", {1}}, {"min", {1, 1}}, {"max", {1, 1}},
                                              {"mean", {1, 1}}, {"stddev", {0, 0}}};
       }}};
  for (const auto& r : readers()) {
    if (r.reference || std::string(r.name) == "resume") continue;
    for (const auto& [needle, mutate] : cases) expect_refused(r, bad(r, mutate), needle, needle);
  }
}

TEST(HostileFiles, DeepNesting) {
  for (const auto& r : readers()) {
    std::string deep(kMaxJsonDepth + 1, '[');
    deep += std::string(kMaxJsonDepth + 1, ']');
    expect_refused(r, deep, "nested deeper than", "a deep array");
    // Deep inside an otherwise valid document, and deep enough to overflow a recursive reader.
    std::string text = (r.reference ? valid_reference() : valid_result()).dump();
    text.insert(text.size() - 1, ",\"x\":" + std::string(100000, '[') + std::string(100000, ']'));
    expect_refused(r, text, "nested deeper than", "100000 levels");
    // Brackets inside strings do not count.
    json d = r.reference ? valid_reference() : valid_result();
    d[r.reference ? "description" : "cluster"] = r.reference ? json(std::string(1000, '[')) : json({{"name", std::string(1000, '{')}, {"source", "--cluster"}});
    EXPECT_NO_THROW(r.read(d.dump())) << r.name;
  }
}

TEST(HostileFiles, InvalidUtf8) {
  for (const auto& r : readers())
    for (const char* bytes : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "abc\xe2\x82", "\xf8\x88\x80\x80\x80"}) {
      std::string text = (r.reference ? valid_reference() : valid_result()).dump();
      const std::string target = "testcluster";  // the cluster name in both kinds of file
      text.replace(text.find(target), target.size(), std::string("tc") + bytes);
      expect_refused(r, text, "not valid JSON", "invalid UTF-8");
    }
}

TEST(HostileFiles, DuplicateKeys) {
  for (const auto& r : readers()) {
    std::string text = (r.reference ? valid_reference() : valid_result()).dump();
    // At the top level, and inside a nested object: refused, naming the key.
    std::string top = text;
    top.insert(top.size() - 1, r.reference ? ",\"schema\":\"gpuscale.reference\"" : ",\"backend\":\"cuda\"");
    expect_refused(r, top, r.reference ? "duplicate key \"schema\"" : "duplicate key \"backend\"", "a duplicate top key");
    if (!r.reference) {
      std::string nested = text;
      const auto at = nested.find("\"world_size\":");
      nested.insert(at, "\"world_size\":64,");
      expect_refused(r, nested, "duplicate key \"world_size\" in the object \"mpi\"", "a duplicate nested key");
    }
    // The same key in different objects is not a duplicate.
    EXPECT_NO_THROW(r.read(text)) << r.name;
  }
  EXPECT_NO_THROW(parse_json_text(R"([{"a":1},{"a":2}])", "x"));
  EXPECT_NO_THROW(parse_json_text(R"({"a":{"a":{"a":1}},"b":{"a":2}})", "x"));
  EXPECT_THROW(parse_json_text(R"({"a":1,"b":{"c":1},"a":2})", "x"), Error);
  // A duplicate key is named safely however hostile it is.
  try {
    parse_json_text("{\"\\u001b[2J\":1,\"\\u001b[2J\":2}", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
  }
}

// nlohmann's lexer ends its input at a NUL byte: a good document, a NUL and a second document, or a good
// document and a run of NULs, read as the first document alone until every reader refused the NUL.
TEST(HostileFiles, BytesAfterTheDocument) {
  for (const auto& r : readers()) {
    const std::string text = (r.reference ? valid_reference() : valid_result()).dump();
    const std::string nul(1, '\0');
    expect_refused(r, text + nul + text, "NUL byte at byte " + std::to_string(text.size()), "a NUL and a second document");
    expect_refused(r, text + std::string(1 << 20, '\0'), "NUL byte", "a document and 1 MiB of NULs");
    expect_refused(r, text + " \n" + nul, "NUL byte", "whitespace and a NUL");
    expect_refused(r, nul + text, "NUL byte at byte 0", "a NUL before the document");
    expect_refused(r, text + "\n" + text, "not valid JSON", "a second document");
    expect_refused(r, text + "x", "not valid JSON", "a byte after the document");
    EXPECT_NO_THROW(r.read(text + " \n\t\r\n")) << r.name << ": whitespace after the document";
  }
  // The streamed reader of a file, whose NUL may lie in any buffer the stream fills.
  std::random_device rd;
  const fs::path p = fs::temp_directory_path() / ("gpuscale-nul-" + std::to_string(rd()) + ".json");
  const std::string text = valid_result().dump();
  for (const std::string& tail : {std::string(1, '\0') + text, std::string(300000, ' ') + std::string(1, '\0'),
                                  std::string(3 << 20, '\0')}) {
    { std::ofstream(p, std::ios::binary) << text << tail; }
    try {
      stream_result_file(p, [](ResultRow&&, std::size_t) {});
      ADD_FAILURE() << "a file with a NUL after the document was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("NUL byte at byte " + std::to_string(text.size() + tail.find('\0'))),
                std::string::npos)
          << e.what();
    }
  }
  { std::ofstream(p, std::ios::binary) << text << std::string(300000, ' '); }
  EXPECT_NO_THROW(stream_result_file(p, [](ResultRow&&, std::size_t) {}));
  fs::remove(p);
}

TEST(HostileFiles, LargeStringsAndArraysAreReadAndEscaped) {
  // A valid file with a 4 MiB cluster name, 2000 environment entries and a 5000-word command line is
  // read by every result reader; what reaches the outputs is escaped and bounded. (Sizes kept modest:
  // every reader runs under the sanitizers in CI, where each allocation costs a stack walk.)
  json d = valid_result();
  d["cluster"]["name"] = std::string(4 << 20, 'c') + "\x1b[31m<script>";
  for (int i = 0; i < 2000; ++i) d["environment"]["OMP_" + std::to_string(i)] = std::string(100, 'v');
  d["command_line"] = json::array();
  for (int i = 0; i < 5000; ++i) d["command_line"].push_back("--x");
  const std::string text = d.dump();
  for (const auto& r : readers()) {
    if (r.reference) continue;
    EXPECT_NO_THROW(r.read(text)) << r.name;
  }
  auto run = result_from_json("f.json", parse_result_text(text, "f.json"));
  std::vector<FileReport> files;
  files.push_back(make_file_report(std::move(run), kDefaultStragglerThreshold));
  const auto shown = terminal_reporter()->render(files, {});
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
  const auto html = report_format("--html").render(files, {});
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  // Larger than any file gpuscale writes: refused before reading (a sparse file costs no disk). The
  // whole-document readers take 256 MiB; the streamed one, whose memory does not grow with the text,
  // takes up to kMaxStreamedResultBytes.
  std::random_device rd;
  const fs::path big = fs::temp_directory_path() / ("gpuscale-big-" + std::to_string(rd()) + ".json");
  { std::ofstream(big) << "{"; }
  fs::resize_file(big, 300ULL << 20);
  const fs::path huge = fs::temp_directory_path() / ("gpuscale-huge-" + std::to_string(rd()) + ".json");
  { std::ofstream(huge) << "{"; }
  fs::resize_file(huge, kMaxStreamedResultBytes + 1);
  for (const auto& reader : {std::function<void()>([&] { read_result_file(big); }),
                             std::function<void()>([&] { load_reference(big.string()); }),
                             std::function<void()>([&] { stream_result_file(huge, [](ResultRow&&, std::size_t) {}); }),
                             std::function<void()>([&] { load_result(huge.string()); })}) {
    try {
      reader();
      ADD_FAILURE() << "a file over the limit was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("larger than any file gpuscale writes"), std::string::npos) << e.what();
    }
  }
  // 300 MiB is within the streamed reader's limit: it reads on and finds the text is not JSON.
  EXPECT_THROW(stream_result_file(big, [](ResultRow&&, std::size_t) {}), Error);
  fs::remove(big);
  fs::remove(huge);
}

}  // namespace
}  // namespace gpuscale
