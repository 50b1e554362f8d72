// analysis/nccl_table: the nccl-tests table of a collective sweep. Its heading has nccl-tests' words in
// nccl-tests' order, every column of a data line ends where its heading ends, and every value is the
// row's own metric in nccl-tests' format (printf, as nccl-tests prints it). Inputs are random.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_seed.h"
#include "analysis/nccl_table.h"
#include "analysis/row_text.h"
#include "text_lines.h"

namespace gpuscale {
namespace {

using test::lines_of;

// Each whitespace-separated word of a line with the column where it ends.
std::vector<std::pair<std::string, std::size_t>> words(const std::string& line) {
  std::vector<std::pair<std::string, std::size_t>> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start), i);
  }
  return out;
}

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// nccl-tests' time column: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string nccl_time(double us) { return printf_text(us >= 10000 ? "%.0f" : us >= 100 ? "%.1f" : "%.2f", us); }

struct Sweep {
  std::vector<ResultRow> rows;
  std::mt19937_64 rng{test_seed()};
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

  void add(const std::string& bench, int n, const std::string& placement, std::uint64_t size, nlohmann::json extra = {}) {
    ResultRow r;
    r.benchmark = bench;
    r.scope = "collective";
    r.unit = "GB/s";
    r.gpu_count = n;
    r.params = {{"dtype", "fp32"}, {"size_bytes", size}, {"placement", placement}};
    if (bench == "all_reduce" || bench == "reduce") r.params["op"] = "max";
    if (bench == "broadcast" || bench == "reduce") r.params["root"] = 0;
    if (extra.is_object()) r.params.update(extra);
    const double t = uniform(1, 30000), algbw = uniform(0.01, 450);  // busbw < 1000: fits %6.2f
    r.metrics = {{"size_bytes", size}, {"count", size / 4}, {"time_us", t}, {"algbw", algbw},
                 {"busbw", algbw * uniform(0.5, 2)}, {"wrong", 0}};
    r.aggregate = r.metrics["busbw"].get<double>();
    rows.push_back(r);
  }
};

const std::vector<std::string> kNcclTestsHeading = {"size",  "count",  "type", "redop", "root",  "time", "algbw",
                                                    "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"};

TEST(NcclTable, HeadingAndValuesAreNcclTestsAndTheRowsMetrics) {
  Sweep s;
  const int n = std::uniform_int_distribution<int>(2, 64)(s.rng);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = 8 << (s.rng() % 4); b < (1ull << 34); b <<= (1 + s.rng() % 4)) sizes.push_back(b);
  for (const char* placement : {"out-of-place", "in-place"})
    for (auto b : sizes) s.add("all_reduce", n, placement, b);
  const auto tables = nccl_tables(s.rows);
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].lines.size(), sizes.size());
  const auto text = nccl_table_text(tables[0], device_word("cuda"));
  const auto lines = lines_of(text);
  std::size_t head = 0;
  while (head < lines.size() && lines[head].rfind("#       size", 0) != 0) ++head;
  ASSERT_LT(head + 1, lines.size()) << text;
  auto heading = words(lines[head].substr(1));
  ASSERT_EQ(heading.size(), kNcclTestsHeading.size()) << lines[head];
  for (std::size_t i = 0; i < heading.size(); ++i) EXPECT_EQ(heading[i].first, kNcclTestsHeading[i]);
  EXPECT_EQ(nccl_column_names(), kNcclTestsHeading);
  EXPECT_NE(lines[head - 1].find("out-of-place"), std::string::npos);
  EXPECT_LT(lines[head - 1].find("out-of-place"), lines[head - 1].find("in-place"));
  double sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto cells = words(lines[head + 2 + i]);
    ASSERT_EQ(cells.size(), 13u) << lines[head + 2 + i];
    for (std::size_t c = 0; c < cells.size(); ++c)  // right-aligned under its heading, as in nccl-tests
      EXPECT_EQ(cells[c].second, heading[c].second + 1) << "column " << kNcclTestsHeading[c] << ": " << lines[head + 2 + i];
    EXPECT_EQ(cells[0].first, std::to_string(sizes[i]));
    EXPECT_EQ(cells[1].first, std::to_string(sizes[i] / 4));
    EXPECT_EQ(cells[2].first, "float");
    EXPECT_EQ(cells[3].first, "max");
    EXPECT_EQ(cells[4].first, "-1");
    for (int place = 0; place < 2; ++place) {
      const auto& m = s.rows[static_cast<std::size_t>(place) * sizes.size() + i].metrics;
      const std::size_t c = 5 + 4 * static_cast<std::size_t>(place);
      EXPECT_EQ(cells[c].first, nccl_time(m["time_us"].get<double>()));
      EXPECT_EQ(cells[c + 1].first, printf_text("%.2f", m["algbw"].get<double>()));
      EXPECT_EQ(cells[c + 2].first, printf_text("%.2f", m["busbw"].get<double>()));
      EXPECT_EQ(cells[c + 3].first, "0");
      sum += m["busbw"].get<double>();
    }
  }
  const auto avg = nccl_average(tables[0]);
  EXPECT_EQ(avg.rows, 2 * sizes.size());
  EXPECT_NE(text.find("# Avg bus bandwidth    : " + printf_text("%g", sum / (2.0 * sizes.size())) + " \n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("# Out of bounds values : 0 OK\n"), std::string::npos);
  EXPECT_NE(text.find(std::to_string(n) + " GPUs"), std::string::npos);
}

TEST(NcclTable, MissingPlacementInvalidAndNullBandwidth) {
  Sweep s;
  s.add("all_reduce", 4, "out-of-place", 1024);
  s.add("all_reduce", 4, "in-place", 4096);
  s.add("all_reduce", 4, "out-of-place", 4096);
  s.rows.back().status = RowStatus::invalid;
  s.rows.back().metrics["wrong"] = 7;
  s.add("all_reduce", 1, "out-of-place", 1024);
  s.rows.back().metrics["algbw"] = nullptr;  // a collective at 1 GPU: no bandwidth, time still recorded
  s.rows.back().metrics.erase("busbw");
  s.rows.back().aggregate.reset();
  const auto tables = nccl_tables(s.rows);
  ASSERT_EQ(tables.size(), 2u);  // one per GPU count
  const auto four = lines_of(nccl_table_text(tables[0], device_word("cpu")));
  const auto one = lines_of(nccl_table_text(tables[1], device_word("cpu")));
  EXPECT_NE(four[0].find("at 4 ranks"), std::string::npos) << four[0];
  EXPECT_NE(one[0].find("at 1 rank:"), std::string::npos) << one[0];
  auto data = [](const std::vector<std::string>& l, std::size_t i) { return words(l[5 + i]); };
  auto line0 = data(four, 0);  // 1024: out-of-place only
  for (std::size_t c = 9; c < 13; ++c) EXPECT_EQ(line0[c].first, "-");
  auto line1 = data(four, 1);  // 4096: in-place first in the file, then an invalid out-of-place
  EXPECT_EQ(line1[6].first, "INVALID");
  EXPECT_EQ(line1[7].first, "INVALID");
  EXPECT_EQ(line1[8].first, "7");
  EXPECT_EQ(line1[5].first, nccl_time(s.rows[2].metrics["time_us"].get<double>()));
  EXPECT_EQ(line1[11].first, printf_text("%.2f", s.rows[1].metrics["busbw"].get<double>()));
  const auto avg = nccl_average(tables[0]);  // the invalid row is left out
  EXPECT_EQ(avg.rows, 2u);
  EXPECT_DOUBLE_EQ(*avg.busbw, (s.rows[0].metrics["busbw"].get<double>() + s.rows[1].metrics["busbw"].get<double>()) / 2);
  auto single = data(one, 0);
  EXPECT_EQ(single[6].first, "n/a");
  EXPECT_EQ(single[7].first, "n/a");
  EXPECT_FALSE(nccl_average(tables[1]).busbw);
  EXPECT_NE(nccl_table_text(tables[1], device_word("cpu")).find("# Avg bus bandwidth    : n/a"), std::string::npos);
}

TEST(NcclTable, RootsOpsTypesAndOneTablePerTransport) {
  Sweep s;
  s.add("broadcast", 2, "out-of-place", 256);
  s.add("alltoall", 2, "out-of-place", 256);
  s.add("all_reduce", 2, "out-of-place", 256, {{"transport", "nccl"}, {"dtype", "bf16"}});
  s.add("all_reduce", 2, "out-of-place", 256, {{"transport", "mpi"}});
  s.add("pairs.sendrecv", 2, "out-of-place", 256);  // not one of nccl-tests' collectives
  const auto tables = nccl_tables(s.rows);
  ASSERT_EQ(tables.size(), 4u);
  auto first = [](const NcclTable& t) { return words(lines_of(nccl_table_text(t, device_word("cuda")))[5]); };
  EXPECT_EQ(first(tables[0])[3].first, "none");
  EXPECT_EQ(first(tables[0])[4].first, "0");
  EXPECT_EQ(first(tables[1])[3].first, "none");
  EXPECT_EQ(first(tables[1])[4].first, "-1");
  EXPECT_EQ(first(tables[2])[2].first, "bfloat16");
  EXPECT_EQ(tables[2].extra, "transport=nccl");
  EXPECT_EQ(tables[3].extra, "transport=mpi");
  EXPECT_EQ(nccl_type_name("fp64"), "double");
  EXPECT_EQ(nccl_type_name("fp16"), "half");
  EXPECT_EQ(nccl_time_text(12345.6), "12346");
  EXPECT_EQ(nccl_time_text(123.45), "123.5");
  EXPECT_EQ(nccl_time_text(1.234), "1.23");
}

TEST(NcclTable, SummaryHoldsTheTableAndOtherLinesFitTheWidth) {
  Sweep s;
  for (int n : {1, 2, 4})
    for (const char* placement : {"out-of-place", "in-place"})
      for (std::uint64_t b : {1024ull, 1ull << 20, 1ull << 30})
        s.add("all_reduce", n, placement, b, {{"a_rather_long_parameter_name", "with a long value, too"}});
  for (auto& r : s.rows) r.errors = {"a long reason " + std::string(120, 'x')};
  s.rows[3].status = RowStatus::failed;
  for (std::size_t width : {40u, 80u, 120u}) {
    TextStyle style;
    style.width = width;
    const auto text = format_summary(s.rows, style);
    ASSERT_NE(text.find("#       size         count      type   redop    root"), std::string::npos);
    bool in_table = false;
    for (const auto& l : lines_of(text)) {
      if (l.rfind("# gpuscale ", 0) == 0) in_table = true;
      if (!in_table) {
        EXPECT_LE(l.size(), width) << l;
      }
      if (l.empty()) in_table = false;  // a blank line ends a table
    }
  }
}

}  // namespace
}  // namespace gpuscale
