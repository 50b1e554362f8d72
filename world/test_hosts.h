#pragma once
// Test-only host names: GPUSCALE_TEST_HOSTS=h1,h1,h2,h2,... (one name per world rank, in rank order)
// makes the ranks on this machine act as nodes of those names, so fleet tiling, node pairs and outlier
// naming are tested without a cluster. Pure parsing here; World applies it (see apply_test_hosts).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

inline constexpr const char* kTestHostsEnv = "GPUSCALE_TEST_HOSTS";

// The host of every world rank from the variable's text, for a world of `world_size` ranks. Throws
// gpuscale::Error (exit 2), one line naming GPUSCALE_TEST_HOSTS, when the count of names differs from
// world_size (the line gives both counts) or an item is not a host name (core/host_name.h; items
// are trimmed of surrounding blanks, an empty item is refused).
std::vector<std::string> parse_test_hosts(std::string_view text, int world_size);

// parse_test_hosts of the variable, or nullopt when it is unset.
std::optional<std::vector<std::string>> test_hosts_from_env(int world_size);

// The local rank of every world rank implied by the host names: its index among the ranks of the
// same host, counted in world-rank order ({a, b, a, a} -> {0, 0, 1, 2}).
std::vector<int> local_ranks_of(const std::vector<std::string>& hosts);

}  // namespace gpuscale
