#include "world/node_tree.h"

#include <cstdint>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

NodeTree node_tree(const std::vector<std::string>& hosts) {
  NodeTree t;
  std::map<std::string, int> index;  // host -> node index
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    auto [it, fresh] = index.try_emplace(hosts[r], static_cast<int>(t.members.size()));
    if (fresh) t.members.emplace_back();
    const int n = it->second;
    t.members[static_cast<std::size_t>(n)].push_back(static_cast<int>(r));
    t.node.push_back(n);
    t.leader.push_back(t.members[static_cast<std::size_t>(n)].front());
  }
  return t;
}

std::string pack_strings(const std::vector<std::string>& parts) {
  std::size_t total = 0;
  for (const auto& p : parts) total += sizeof(std::uint64_t) + p.size();
  std::string out;
  out.reserve(total);
  for (const auto& p : parts) {
    const std::uint64_t len = p.size();
    out.append(reinterpret_cast<const char*>(&len), sizeof len);  // same machine order on every rank
    out.append(p);
  }
  return out;
}

std::vector<std::string> unpack_strings(std::string_view packed, std::size_t count) {
  std::vector<std::string> out;
  out.reserve(count);
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t len = 0;
    if (packed.size() - at < sizeof len)
      throw Error(fmt::format("internal: a node's gathered data ends before part {} of {}", i + 1, count), 1);
    std::memcpy(&len, packed.data() + at, sizeof len);
    at += sizeof len;
    if (len > packed.size() - at)
      throw Error(fmt::format("internal: part {} of a node's gathered data is cut short", i + 1), 1);
    out.emplace_back(packed.substr(at, static_cast<std::size_t>(len)));
    at += static_cast<std::size_t>(len);
  }
  if (at != packed.size()) throw Error(fmt::format("internal: a node's gathered data has more than {} parts", count), 1);
  return out;
}

std::vector<std::string> assemble_gather(const NodeTree& tree, const std::vector<std::string>& packed_nodes) {
  if (packed_nodes.size() != tree.members.size())
    throw Error(fmt::format("internal: {} nodes' data gathered for {} nodes", packed_nodes.size(), tree.members.size()), 1);
  std::vector<std::string> out(tree.node.size());
  for (std::size_t n = 0; n < packed_nodes.size(); ++n) {
    const auto& members = tree.members[n];
    auto parts = unpack_strings(packed_nodes[n], members.size());
    for (std::size_t i = 0; i < members.size(); ++i) out[static_cast<std::size_t>(members[i])] = std::move(parts[i]);
  }
  return out;
}

}  // namespace gpuscale
