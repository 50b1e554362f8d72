#include "collectives/alltoallv_plan.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace gpuscale {

namespace {

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A finite number >= 0 spanning the whole token, or nullopt.
std::optional<double> weight_of(const std::string& token) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(token.c_str(), &end);
  if (token.empty() || end != token.c_str() + token.size() || errno != 0 || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

// Weights separated by spaces, tabs or commas.
std::optional<AlltoallvSkew> weights_of(std::string_view text, std::string& why) {
  AlltoallvSkew skew;
  std::string token;
  double sum = 0;
  auto take = [&]() {  // the token ended: a weight, or false with why
    if (token.empty()) return true;
    const auto w = weight_of(token);
    if (!w) {
      why = "weight " + std::to_string(skew.weights.size() + 1) + " is not a finite number >= 0";
      return false;
    }
    if (skew.weights.size() == kMaxSkewWeights) {
      why = "more than " + std::to_string(kMaxSkewWeights) + " weights";
      return false;
    }
    skew.weights.push_back(*w);
    sum += *w;
    token.clear();
    return true;
  };
  for (const char ch : text)
    if (ch != ' ' && ch != '\t' && ch != ',' && ch != '\r') {
      token += ch;
    } else if (!take()) {
      return std::nullopt;
    }
  if (!take()) return std::nullopt;
  if (skew.weights.size() < 2) {
    why = "weights name 2 or more ranks, one weight each";
    return std::nullopt;
  }
  if (!(sum > 0)) {
    why = "the weights add up to 0";
    return std::nullopt;
  }
  return skew;
}

}  // namespace

std::string alltoallv_skew_text(const AlltoallvSkew& skew) {
  if (!skew.weights.empty()) {
    std::string out = "weights:";
    for (std::size_t d = 0; d < skew.weights.size(); ++d) out += (d ? " " : "") + number_text(skew.weights[d]);
    return out;
  }
  return skew.zipf == 0 ? "uniform" : "zipf:" + number_text(skew.zipf);
}

std::optional<AlltoallvSkew> parse_alltoallv_skew(std::string_view text, std::string& why) {
  if (text == "uniform") return AlltoallvSkew{};
  constexpr std::string_view kZipf = "zipf:", kWeights = "weights:";
  if (text.substr(0, kZipf.size()) == kZipf) {
    const std::string s(text.substr(kZipf.size()));
    char* end = nullptr;
    errno = 0;
    const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && v > 0 && v <= 10) return AlltoallvSkew{v, {}};
    why = "a Zipf exponent is a number in (0, 10]";
    return std::nullopt;
  }
  if (text.substr(0, kWeights.size()) == kWeights) return weights_of(text.substr(kWeights.size()), why);
  why = "a skew is 'uniform', 'zipf:S' or 'file:PATH'";
  return std::nullopt;
}

std::optional<AlltoallvSkew> parse_alltoallv_skew_file(const std::string& text, std::string& why) {
  std::string row;
  std::size_t rows = 0, at = 0;
  while (at <= text.size()) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(at, eol - at);
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r,") != std::string::npos) {
      ++rows;
      row = line;
    }
    at = eol + 1;
  }
  if (rows != 1) {
    why = rows == 0 ? "no weights" : std::to_string(rows) +
                                         " rows: a skew file is one row of weights, one per receiving rank, which "
                                         "every sender follows (per-sender rows are not supported)";
    return std::nullopt;
  }
  return weights_of(row, why);
}

std::optional<std::string> alltoallv_skew_refusal(const AlltoallvSkew& skew, int n) {
  if (skew.weights.empty() || skew.weights.size() == static_cast<std::size_t>(n < 1 ? 1 : n)) return std::nullopt;
  return "the skew's weights are for " + std::to_string(skew.weights.size()) + " ranks, this group has " +
         std::to_string(n);
}

std::vector<std::uint64_t> alltoallv_peer_counts(std::uint64_t count, const AlltoallvSkew& skew,
                                                 std::uint64_t element_size, int n) {
  if (auto why = alltoallv_skew_refusal(skew, n)) throw std::invalid_argument("alltoallv_peer_counts: " + *why);
  const std::uint64_t grain = element_size >= 16 ? 1 : 16 / element_size;
  const auto un = static_cast<std::uint64_t>(n < 1 ? 1 : n);
  std::vector<std::uint64_t> c(un);
  if (skew.zipf == 0 && skew.weights.empty()) {
    const std::uint64_t per = count / un / grain * grain;  // coll_rows::per_rank
    for (auto& x : c) x = per;
    return c;
  }
  std::vector<double> w(un);
  double h = 0;
  for (std::uint64_t d = 0; d < un; ++d)
    h += w[d] = skew.weights.empty() ? std::pow(static_cast<double>(d + 1), -skew.zipf) : skew.weights[d];
  for (std::uint64_t d = 0; d < un; ++d) {
    const double share = static_cast<double>(count) * w[d] / h;
    c[d] = static_cast<std::uint64_t>(std::floor(share / static_cast<double>(grain))) * grain;
  }
  return c;
}

CollCounts alltoallv_counts(std::uint64_t count, const AlltoallvSkew& skew, std::uint64_t element_size, int n) {
  // As nccl-tests: the count passed is the uniform per-peer count, and what a rank sends in all is that x n.
  const std::uint64_t grain = element_size >= 16 ? 1 : 16 / element_size;
  const auto un = static_cast<std::uint64_t>(n < 1 ? 1 : n);
  const std::uint64_t per = count / un / grain * grain;
  const auto c = alltoallv_peer_counts(per * un, skew, element_size, n);
  std::uint64_t send = 0, hottest = 0;
  for (const auto x : c) {
    send += x;
    hottest = x > hottest ? x : hottest;
  }
  CollCounts r;
  r.send = send;
  r.recv = hottest * c.size();
  r.param = per;
  r.skew = skew;
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
