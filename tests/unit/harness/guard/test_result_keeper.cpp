// harness/guard/result_keeper: the run loop's writes, the first of which never replaces an existing file
// unless asked, and the seal an abnormal ending puts on the last document (once; later writes dropped).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.h"
#include "harness/guard/result_keeper.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Keeper : public testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("gpuscale-keeper-" + std::to_string(rd()));
    fs::create_directory(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  json read(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
  }
  fs::path dir_;
};

TEST_F(Keeper, WritesThenSealsOnce) {
  ResultKeeper k;
  const auto path = dir_ / "r.json";
  k.open(path.string(), false);
  std::string error;
  EXPECT_FALSE(k.seal([](json&) {}, &error));  // nothing written yet: nothing to seal
  k.write({{"summary", {{"complete", false}}}, {"results", {1}}});
  k.write({{"summary", {{"complete", false}}}, {"results", {1, 2}}});
  EXPECT_TRUE(k.seal([](json& d) { d["summary"]["exit_code"] = 6; }, &error)) << error;
  const auto sealed = read(path);
  EXPECT_EQ(sealed["results"], json({1, 2}));
  EXPECT_EQ(sealed["summary"]["exit_code"], 6);
  // Sealed: the run loop's writes and a second seal change nothing.
  k.write({{"results", {1, 2, 3}}});
  EXPECT_FALSE(k.seal([](json& d) { d["summary"]["exit_code"] = 5; }, &error));
  EXPECT_EQ(read(path), sealed);
}

TEST_F(Keeper, FirstWriteNeverReplacesUnlessAsked) {
  const auto path = dir_ / "exists.json";
  std::ofstream(path) << "{\"keep\": true}";
  ResultKeeper k;
  k.open(path.string(), false);
  EXPECT_THROW(k.write({{"new", true}}), Error);
  EXPECT_EQ(read(path), json({{"keep", true}}));
  ResultKeeper forced;
  forced.open(path.string(), true);
  forced.write({{"new", true}});
  forced.write({{"new", 2}});  // later writes replace their own file
  EXPECT_EQ(read(path), json({{"new", 2}}));
}

TEST_F(Keeper, SealFailureIsReported) {
  ResultKeeper k;
  const auto path = dir_ / "gone" / "r.json";
  fs::create_directory(dir_ / "gone");
  k.open(path.string(), false);
  k.write({{"a", 1}});
  fs::remove_all(dir_ / "gone");  // the directory vanished under the run
  std::string error;
  EXPECT_FALSE(k.seal([](json&) {}, &error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
}

}  // namespace
}  // namespace gpuscale
