// health/rapl: RAPL package zones found under a powercap tree (subzones not counted twice), read, and
// their energy summed; a missing tree, an unreadable counter and a counter beyond its range give no
// energy, with the reason. The tree is a directory made here with random counters.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "health/rapl.h"
#include "test_seed.h"

namespace gpuscale::health {
namespace {

namespace fs = std::filesystem;

struct PowercapTree {
  fs::path root;
  explicit PowercapTree(std::uint64_t tag) {
    root = fs::temp_directory_path() / ("gpuscale-powercap-" + std::to_string(tag));
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~PowercapTree() { fs::remove_all(root); }
  void zone(const std::string& dir, const std::string& name, std::uint64_t uj, std::uint64_t range) {
    fs::create_directories(root / dir);
    std::ofstream(root / dir / "name") << name << "\n";
    set(dir, uj);
    std::ofstream(root / dir / "max_energy_range_uj") << range << "\n";
  }
  void set(const std::string& dir, std::uint64_t uj) { std::ofstream(root / dir / "energy_uj") << uj << "\n"; }
};

TEST(Rapl, PackagesSummedAcrossAWrapSubzonesLeftOut) {
  std::mt19937_64 rng(test_seed());
  PowercapTree tree(rng());
  const std::uint64_t range = 262143328850ULL;
  const std::uint64_t a0 = rng() % (range / 2), a1 = range - 1000 - rng() % 1000;  // package-1 wraps below
  const std::uint64_t d0 = 1 + rng() % 50'000'000, d1 = 2000 + rng() % 50'000'000;
  tree.zone("intel-rapl:0", "package-0", a0, range);
  tree.zone("intel-rapl:1", "package-1", a1, range);
  tree.zone("intel-rapl:0:0", "core", 7, range);  // inside package-0's figure
  const auto rapl = find_rapl(tree.root.string());
  ASSERT_EQ(rapl.zones.size(), 2u) << rapl.why_none;
  EXPECT_EQ(rapl.source(), "RAPL package-0+package-1");
  const auto before = read_rapl(rapl, 10.0);
  ASSERT_TRUE(before.why_not.empty()) << before.why_not;
  tree.set("intel-rapl:0", a0 + d0);  // no wrap
  tree.set("intel-rapl:1", (a1 + d1) - range);  // wrapped once
  const auto after = read_rapl(rapl, 12.0);
  const auto w = rapl_energy(rapl, before, after);
  ASSERT_TRUE(w.energy.joules) << w.energy.invalid;
  EXPECT_EQ(w.scope, "node");
  EXPECT_DOUBLE_EQ(w.seconds, 2.0);
  const double want = static_cast<double>(d0 + d1) * 1e-6;
  EXPECT_NEAR(*w.energy.joules, want, 1e-9 * want);
}

TEST(Rapl, NoTreeNoZoneUnreadableAndOutOfRangeSayWhy) {
  std::mt19937_64 rng(test_seed());
  auto none = find_rapl("/nonexistent/powercap");
  EXPECT_TRUE(none.zones.empty());
  EXPECT_NE(none.why_none.find("no powercap under /nonexistent/powercap"), std::string::npos) << none.why_none;
  auto w = rapl_energy(none, read_rapl(none, 0), read_rapl(none, 1));
  EXPECT_FALSE(w.energy.joules);
  EXPECT_EQ(w.energy.invalid, none.why_none);

  PowercapTree tree(rng());
  fs::create_directories(tree.root / "intel-rapl-mmio:0");  // not a package zone
  EXPECT_NE(find_rapl(tree.root.string()).why_none.find("no RAPL package zone"), std::string::npos);

  tree.zone("intel-rapl:0", "package-0", 100, 1000);
  const auto rapl = find_rapl(tree.root.string());
  ASSERT_EQ(rapl.zones.size(), 1u);
  const auto before = read_rapl(rapl, 0);
  fs::remove(tree.root / "intel-rapl:0" / "energy_uj");  // as unreadable as a root-only file
  const auto gone = read_rapl(rapl, 1);
  EXPECT_NE(gone.why_not.find("cannot read"), std::string::npos) << gone.why_not;
  w = rapl_energy(rapl, before, gone);
  EXPECT_FALSE(w.energy.joules);
  tree.set("intel-rapl:0", 5000);  // beyond the zone's range of 1000
  w = rapl_energy(rapl, before, read_rapl(rapl, 1));
  EXPECT_FALSE(w.energy.joules);
  EXPECT_NE(w.energy.invalid.find("beyond its range"), std::string::npos) << w.energy.invalid;
}

}  // namespace
}  // namespace gpuscale::health
