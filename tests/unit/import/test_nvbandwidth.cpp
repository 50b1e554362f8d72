// nvbandwidth's text and --json output read into copy rows (import/nvbandwidth.h), from seeded random
// matrices printed as nvbandwidth v0.8 prints them (output.cpp, inline_common.h, json_output.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "import/nvbandwidth.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using Matrix = std::vector<std::vector<std::optional<double>>>;

// Values as the text prints them ("%.2f"), N/A on a peer matrix's diagonal.
Matrix random_matrix(std::mt19937_64& rng, int rows, int n, bool peer, double lo, double hi) {
  Matrix m(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      if (peer && r == c) {
        m[r].push_back(std::nullopt);
        continue;
      }
      m[r].push_back(std::stod(fmt::format("{:.2f}", std::uniform_real_distribution<double>(lo, hi)(rng))));
    }
  return m;
}

double sum_of(const Matrix& m) {
  double s = 0;
  for (const auto& r : m)
    for (const auto& v : r) s += v.value_or(0.0);
  return s;
}

std::string text_matrix(const std::string& key, const std::string& desc, const Matrix& m) {
  std::string out = desc + "\n  ";
  for (std::size_t c = 0; c < m[0].size(); ++c) out += fmt::format("{:>10}", c);
  out += "\n";
  for (std::size_t r = 0; r < m.size(); ++r) {
    out += fmt::format("{:>2}", r);
    for (const auto& v : m[r]) out += v ? fmt::format("{:>10.2f}", *v) : fmt::format("{:>10}", "N/A");
    out += "\n";
  }
  return out + fmt::format("\nSUM {} {:.2f}\n\n", key, sum_of(m));
}

std::string text_header(int n, const std::string& host) {
  std::string out = "nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nCUDA Runtime Version: 12040\nCUDA Driver Version: 12040\n"
                    "Driver Version: 550.54.15\n\n" + host + "\n";
  for (int i = 0; i < n; ++i) out += fmt::format("Device {}: NVIDIA H100 80GB HBM3 (00000000:{:02x}:00)\n", i, 0x18 + i);
  return out + "\n";
}

TEST(Nvbandwidth, TextMatricesBecomeOneRowPerMeasuredCell) {
  std::mt19937_64 rng(test_seed());
  const int n = std::uniform_int_distribution<int>(2, 8)(rng);
  const Matrix h2d = random_matrix(rng, 1, n, false, 10, 60), d2d = random_matrix(rng, n, n, true, 100, 900);
  const Matrix local = random_matrix(rng, 1, n, false, 500, 3000);
  std::string text = text_header(n, "node-17");
  text += "Running host_to_device_memcpy_ce.\n" + text_matrix("host_to_device_memcpy_ce", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", h2d);
  text += "Waived: \n";
  text += "Running device_to_device_memcpy_read_sm.\n" +
          text_matrix("device_to_device_memcpy_read_sm", "memcpy SM GPU(row) -> GPU(column) bandwidth (GB/s)", d2d);
  text += "Running device_local_copy.\n" + text_matrix("device_local_copy", "memcpy local GPU(column) bandwidth (GB/s)", local);
  text += "NOTE: The reported results may not reflect the full capabilities of the platform.\n";
  const auto in = read_nvbandwidth_text(ImportText("n.txt", text));
  ASSERT_EQ(in.ranks.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(in.ranks[1].host, "node-17");
  EXPECT_EQ(in.ranks[1].pci_bus_id, "00000000:19:00");
  EXPECT_EQ(in.tool_version, "v0.8");
  ASSERT_EQ(in.rows.size(), static_cast<std::size_t>(n + n * (n - 1) + n));
  std::size_t k = 0;
  for (int c = 0; c < n; ++c, ++k) {
    EXPECT_EQ(in.rows[k].benchmark, "copy.h2d");
    EXPECT_EQ(in.rows[k].ranks, std::vector<int>{c});
    EXPECT_DOUBLE_EQ(*in.rows[k].aggregate, *h2d[0][c]);
  }
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      if (r == c) continue;
      const auto& row = in.rows[k++];
      EXPECT_EQ(row.benchmark, "copy.p2p_sm");
      EXPECT_EQ(row.params["direction"], "read");
      EXPECT_EQ(row.params["gpu"], r);
      EXPECT_EQ(row.params["peer"], c);
      EXPECT_DOUBLE_EQ(*row.aggregate, *d2d[r][c]);
    }
  for (int c = 0; c < n; ++c, ++k) {
    EXPECT_EQ(in.rows[k].benchmark, "copy.d2d");
    EXPECT_DOUBLE_EQ(*in.rows[k].aggregate, 2 * *local[0][c]) << "gpuscale's d2d counts read plus write";
    EXPECT_DOUBLE_EQ(in.rows[k].metrics["once_counted_gbps"].get<double>(), *local[0][c]);
  }
}

TEST(Nvbandwidth, JsonStacksABidirectionalTestcasesThreeMatrices) {
  std::mt19937_64 rng(test_seed() + 1);
  const int n = std::uniform_int_distribution<int>(2, 6)(rng);
  nlohmann::json devices = nlohmann::json::array(), matrix = nlohmann::json::array();
  for (int i = 0; i < n; ++i) devices.push_back(fmt::format("{}: NVIDIA H100 80GB HBM3 (00000000:{:02x}:00): (gpu-b{})", i, 0x18 + i, 3));
  std::vector<Matrix> parts;
  for (int p = 0; p < 3; ++p) {
    parts.push_back(random_matrix(rng, n, n, true, 100, 400));
    for (const auto& r : parts.back()) {
      nlohmann::json row = nlohmann::json::array();
      for (const auto& v : r) row.push_back(v ? fmt::format("{:g}", *v) : "N/A");
      matrix.push_back(row);
    }
  }
  const nlohmann::json doc = {{"nvbandwidth",
                               {{"version", "v0.8"},
                                {"git_version", "v0.8"},
                                {"CUDA Runtime Version", 12040},
                                {"Driver Version", "550.54.15"},
                                {"GPU Device list", devices},
                                {"testcases",
                                 {{{"name", "device_to_device_bidirectional_memcpy_write_ce"},
                                   {"status", "Passed"},
                                   {"bandwidth_description", "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)"},
                                   {"bandwidth_matrix", matrix},
                                   {"sum", sum_of(parts[2])}},
                                  {{"name", "host_device_latency_sm"}, {"status", "Waived"}}}}}}};
  const auto in = read_nvbandwidth_json(ImportText("n.json", doc.dump(3)));
  ASSERT_EQ(in.rows.size(), static_cast<std::size_t>(3 * n * (n - 1)));
  EXPECT_EQ(in.ranks[0].host, "gpu-b3");
  std::size_t k = 0;
  const char* names[] = {"write1", "write2", "total"};
  for (int p = 0; p < 3; ++p)
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        if (r == c) continue;
        const auto& row = in.rows[k++];
        EXPECT_EQ(row.params["matrix"], names[p]);
        EXPECT_EQ(row.params["direction"], "write");
        EXPECT_DOUBLE_EQ(*row.aggregate, *parts[static_cast<std::size_t>(p)][r][c]);
      }
  // The last matrix's sum is the tool's: an edited cell of it is refused.
  auto bad = doc;
  bad["nvbandwidth"]["testcases"][0]["bandwidth_matrix"][2 * n][1] = "999.5";
  EXPECT_THROW(read_nvbandwidth_json(ImportText("n.json", bad.dump())), Error);
}

TEST(Nvbandwidth, UnderMpiTheMatrixIndicesAreProcessesOnTheirHosts) {
  // Multinode nvbandwidth (output.cpp printGPUsMultinode): one "Process" line per rank; here with
  // --perfFormatter's "&&&& PERF" sum line and the 0.00 diagonal older versions print.
  std::mt19937_64 rng(test_seed() + 3);
  const int per = std::uniform_int_distribution<int>(1, 4)(rng), n = 2 * per;
  Matrix m = random_matrix(rng, n, n, true, 20, 400);
  for (int i = 0; i < n; ++i) m[i][i] = 0.0;
  std::string text = "nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nMPI version: Open MPI v4.1.5\n"
                     "CUDA Runtime Version: 12080\nCUDA Driver Version: 12080\nDriver Version: 570.124.06\n\n";
  for (int p = 0; p < n; ++p)
    text += fmt::format("Process {} (node-{}): device {}: NVIDIA GH200 480GB (00000009:01:00)\n", p, p / per, p % per);
  text += "\nRunning multinode_device_to_device_memcpy_read_ce.\n";
  std::string block = text_matrix("multinode_device_to_device_memcpy_read_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", m);
  block.replace(block.find("SUM "), 4, "&&&& PERF ");
  block.replace(block.rfind("\n\n"), 2, " +GB/s\n\n");
  const auto in = read_nvbandwidth_text(ImportText("mn.txt", text + block));
  ASSERT_EQ(in.ranks.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(in.ranks[static_cast<std::size_t>(n - 1)].host, fmt::format("node-{}", 1));
  EXPECT_EQ(in.ranks[static_cast<std::size_t>(n - 1)].device, per - 1);
  ASSERT_EQ(in.rows.size(), static_cast<std::size_t>(n * (n - 1)));
  for (const auto& row : in.rows) {
    const int r = row.params["gpu"].get<int>(), c = row.params["peer"].get<int>();
    EXPECT_EQ(row.ranks, std::vector<int>{r});
    EXPECT_DOUBLE_EQ(*row.aggregate, *m[r][c]);
    EXPECT_EQ(row.benchmark, "copy.p2p_ce");
  }
  // A GPU with itself at a non-zero figure is no nvbandwidth matrix.
  Matrix bad = m;
  bad[1][1] = 12.5;
  EXPECT_THROW(read_nvbandwidth_text(ImportText("mn.txt", text + text_matrix("multinode_device_to_device_memcpy_read_ce", "d", bad))), Error);
}

TEST(Nvbandwidth, DamageIsRefusedWithItsLine) {
  std::mt19937_64 rng(test_seed() + 2);
  const int n = std::uniform_int_distribution<int>(3, 8)(rng);
  const Matrix d2d = random_matrix(rng, n, n, true, 100, 900);
  const std::string head = text_header(n, "node-3");
  const std::string body = "Running device_to_device_memcpy_write_ce.\n" +
                           text_matrix("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", d2d);
  const int first_row = static_cast<int>(std::count(head.begin(), head.end(), '\n')) + 4;  // 1-based line of matrix row 0
  const int r = std::uniform_int_distribution<int>(0, n - 1)(rng);
  auto message = [&](const std::string& text) {
    try {
      read_nvbandwidth_text(ImportText("n.txt", text));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(head + body), "accepted");
  auto lines = [&] {
    std::vector<std::string> out;
    std::string s = head + body, l;
    for (char ch : s) {
      if (ch == '\n') out.push_back(l), l.clear();
      else l += ch;
    }
    return out;
  }();
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& l : v) s += l + "\n";
    return s;
  };
  auto edited = lines;
  const std::size_t at = static_cast<std::size_t>(first_row - 1 + r);
  edited[at].replace(edited[at].size() - 10, 10, fmt::format("{:>10}", "12x.5"));
  EXPECT_NE(message(join(edited)).find(fmt::format("n.txt:{}:", first_row + r)), std::string::npos) << message(join(edited));
  auto cut = lines;
  cut.erase(cut.begin() + static_cast<long>(at));
  EXPECT_NE(message(join(cut)).find("n.txt:"), std::string::npos);
  EXPECT_NE(message(join({lines.begin(), lines.begin() + static_cast<long>(at)})).find("cut"), std::string::npos)
      << message(join({lines.begin(), lines.begin() + static_cast<long>(at)}));
  std::string unknown = head + body;
  unknown.replace(unknown.find("Running device_to_device_memcpy_write_ce."), 41, "Running device_to_device_teleport_ce.");
  EXPECT_NE(message(unknown).find("unknown testcase"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
