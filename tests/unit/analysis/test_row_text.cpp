// analysis/row_text: parameter labels and the table of the end-of-run summary and gpuscale report
// (largest collective size only, invalid and failed rows shown as such, never as a number).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/row_text.h"

namespace gpuscale {
namespace {

TEST(Summary, ParamsLabel) {
  EXPECT_EQ(params_label({{"dtype", "fp64"}, {"array_bytes", 1610612736}, {"elements", 201326592}}, false),
            "fp64 1536M");
  const nlohmann::json coll = {
      {"dtype", "fp32"}, {"op", "sum"}, {"placement", "in-place"}, {"size_bytes", 1048576}, {"root", 0}};
  EXPECT_EQ(params_label(coll, false), "fp32 sum in-place 1M");
  EXPECT_EQ(params_label(coll, true), "fp32 sum in-place");
  EXPECT_EQ(params_label({{"dtype", "bf16"}, {"m", 8192}, {"n", 4096}, {"k", 1024}, {"layout", "TN"}}, false),
            "bf16 8192x4096x1024:TN");
  EXPECT_EQ(params_label({{"dtype", "fp16"}, {"extra", 3}, {"mode", "x"}}, false), "fp16 extra=3 mode=x");
  // Sizes built in C++ are signed integers; parsed from a file they are unsigned: the same label.
  EXPECT_EQ(params_label({{"dtype", "fp32"}, {"size_bytes", 1 << 10}, {"width", 7}}, false), "fp32 1K width=7");
}

ResultRow row(const std::string& bench, nlohmann::json params, int k, RowStatus status, std::optional<double> agg) {
  ResultRow r;
  r.benchmark = bench;
  r.unit = "GB/s";
  r.params = std::move(params);
  r.gpu_count = k;
  r.status = status;
  r.aggregate = agg;
  return r;
}

TEST(Summary, ShowsTheLargestCollectiveSizeAndFlagsBadRows) {
  std::vector<ResultRow> rows;
  for (std::uint64_t size : {1024u, 1048576u})
    for (int k : {1, 2})
      rows.push_back(row("all_reduce", {{"dtype", "fp32"}, {"size_bytes", size}}, k, RowStatus::ok,
                         size == 1024 ? 1111.0 : 22.5 * k));
  rows.push_back(row("stream.triad", {{"dtype", "fp64"}, {"array_bytes", 1024}}, 1, RowStatus::ok, 123.0));
  auto bad = row("stream.triad", {{"dtype", "fp64"}, {"array_bytes", 1024}}, 2, RowStatus::invalid, 999.0);
  bad.errors = {"rank 1 (h): 1 of 128 elements wrong"};
  rows.push_back(bad);
  const auto text = format_summary(rows);
  EXPECT_NE(text.find("all_reduce (busbw, GB/s; each series at its largest size)"), std::string::npos) << text;
  EXPECT_NE(text.find("fp32 1M"), std::string::npos) << text;
  EXPECT_NE(text.find("45"), std::string::npos) << text;
  EXPECT_EQ(text.find("1111"), std::string::npos) << text;  // smaller sizes: in the nccl-tests table, from metrics
  EXPECT_NE(text.find("INVALID"), std::string::npos) << text;
  EXPECT_EQ(text.find("999"), std::string::npos) << text;  // an invalid row never shows a number
  EXPECT_NE(text.find("1 measurement(s) invalid or failed"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 128 elements wrong"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuscale
