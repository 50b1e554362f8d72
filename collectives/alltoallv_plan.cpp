#include "collectives/alltoallv_plan.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpuscale {

std::string alltoallv_skew_text(double zipf) {
  if (zipf == 0) return "uniform";
  char buf[40];
  std::snprintf(buf, sizeof buf, "zipf:%g", zipf);
  return buf;
}

std::optional<double> parse_alltoallv_skew(std::string_view text, std::string& why) {
  if (text == "uniform") return 0.0;
  constexpr std::string_view kZipf = "zipf:";
  if (text.substr(0, kZipf.size()) == kZipf) {
    const std::string s(text.substr(kZipf.size()));
    char* end = nullptr;
    errno = 0;
    const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && v > 0 && v <= 10) return v;
    why = "a Zipf exponent is a number in (0, 10]";
    return std::nullopt;
  }
  why = "a skew is 'uniform' or 'zipf:S'";
  return std::nullopt;
}

std::vector<std::uint64_t> alltoallv_peer_counts(std::uint64_t count, double zipf, std::uint64_t element_size, int n) {
  const std::uint64_t grain = element_size >= 16 ? 1 : 16 / element_size;
  const auto un = static_cast<std::uint64_t>(n < 1 ? 1 : n);
  std::vector<std::uint64_t> c(un);
  if (zipf == 0) {
    const std::uint64_t per = count / un / grain * grain;  // coll_rows::per_rank
    for (auto& x : c) x = per;
    return c;
  }
  double h = 0;
  for (std::uint64_t d = 0; d < un; ++d) h += std::pow(static_cast<double>(d + 1), -zipf);
  for (std::uint64_t d = 0; d < un; ++d) {
    const double share = static_cast<double>(count) * std::pow(static_cast<double>(d + 1), -zipf) / h;
    c[d] = static_cast<std::uint64_t>(std::floor(share / static_cast<double>(grain))) * grain;
  }
  return c;
}

CollCounts alltoallv_counts(std::uint64_t count, double zipf, std::uint64_t element_size, int n) {
  // As nccl-tests: the count passed is the uniform per-peer count, and what a rank sends in all is that x n.
  const std::uint64_t grain = element_size >= 16 ? 1 : 16 / element_size;
  const auto un = static_cast<std::uint64_t>(n < 1 ? 1 : n);
  const std::uint64_t per = count / un / grain * grain;
  const auto c = alltoallv_peer_counts(per * un, zipf, element_size, n);
  std::uint64_t send = 0, hottest = 0;
  for (const auto x : c) {
    send += x;
    hottest = x > hottest ? x : hottest;
  }
  CollCounts r;
  r.send = send;
  r.recv = hottest * c.size();
  r.param = per;
  r.skew = zipf;
  return r;
}

CollBlock alltoallv_block(const CollCounts& c, std::uint64_t element_size, int rank, int n) {
  const auto counts = alltoallv_peer_counts(c.param * static_cast<std::uint64_t>(n), c.skew, element_size, n);
  CollBlock b{counts[static_cast<std::size_t>(rank)], 0};
  for (int d = 0; d < rank; ++d) b.offset += counts[static_cast<std::size_t>(d)];
  return b;
}

AlltoallvLayout alltoallv_layout(const CollCounts& c, std::uint64_t element_size, int rank, int n) {
  AlltoallvLayout l;
  l.send_counts = alltoallv_peer_counts(c.param * static_cast<std::uint64_t>(n), c.skew, element_size, n);
  std::uint64_t at = 0;
  for (const auto x : l.send_counts) {
    l.send_displs.push_back(at);
    at += x;
  }
  const std::uint64_t mine = l.send_counts[static_cast<std::size_t>(rank)];
  for (int s = 0; s < n; ++s) {
    l.recv_counts.push_back(mine);
    l.recv_displs.push_back(static_cast<std::uint64_t>(s) * mine);
  }
  return l;
}

}  // namespace gpuscale
