#include "world/test_hosts.h"

#include <cctype>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/host_name.h"

namespace gpuscale {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> parse_test_hosts(std::string_view text, int world_size) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto item = trimmed(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!is_host_name(item))
      throw Error(fmt::format("invalid {}: item {} '{}' is not a host name (letters, digits, '-', '.', '_')",
                              kTestHostsEnv, names.size() + 1, item));
    names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (static_cast<long long>(names.size()) != world_size)
    throw Error(fmt::format("invalid {}: it names {} hosts for a world of {} ranks (give one name per rank, in rank order)",
                            kTestHostsEnv, names.size(), world_size));
  return names;
}

std::optional<std::vector<std::string>> test_hosts_from_env(int world_size) {
  const char* env = std::getenv(kTestHostsEnv);
  if (env == nullptr) return std::nullopt;
  return parse_test_hosts(env, world_size);
}

std::vector<int> local_ranks_of(const std::vector<std::string>& hosts) {
  std::map<std::string, int> seen;
  std::vector<int> out;
  out.reserve(hosts.size());
  for (const auto& h : hosts) out.push_back(seen[h]++);
  return out;
}

}  // namespace gpuscale
