// history/store_url.h: the URL forms, and no password in any message.
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"
#include "core/error.h"
#include "history/store_url.h"

namespace gpuscale::history {
namespace {

TEST(StoreUrl, SqliteAbsoluteAndRelativePaths) {
  auto u = parse_store_url("sqlite:///var/lib/gpuscale/history.db");
  EXPECT_EQ(u.kind, StoreKind::sqlite);
  EXPECT_EQ(u.path, "/var/lib/gpuscale/history.db");
  u = parse_store_url("sqlite://results/h.db");
  EXPECT_EQ(u.path, "results/h.db");
  EXPECT_EQ(u.masked, "sqlite://results/h.db");
}

TEST(StoreUrl, PostgresFormsKeepTheUrlForLibpq) {
  for (const std::string url : {"postgresql://gs:pw@db.example:5432/gpuscale?sslmode=require", "postgres://db/gpuscale",
                                "postgresql:///gpuscale?host=/tmp/pg", "postgresql://gs@[::1]:5433/h"}) {
    const auto u = parse_store_url(url);
    EXPECT_EQ(u.kind, StoreKind::postgresql) << url;
    EXPECT_EQ(u.conninfo, url);
  }
}

TEST(StoreUrl, PasswordMaskedInUserInfoAndQuery) {
  EXPECT_EQ(mask_password("postgresql://gs:s3cret@db:5432/h"), "postgresql://gs:***@db:5432/h");
  EXPECT_EQ(mask_password("postgresql://gs@db/h?password=s3cret&sslmode=require"),
            "postgresql://gs@db/h?password=***&sslmode=require");
  EXPECT_EQ(mask_password("postgresql://gs@db/h"), "postgresql://gs@db/h");
  EXPECT_EQ(url_password("postgresql://gs:a%40b@db/h"), "a%40b");
  EXPECT_EQ(url_password("postgresql://gs@db/h"), "");
}

TEST(StoreUrl, RandomPasswordsNeverInMessages) {
  std::mt19937 rng(test_seed());
  const std::string chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789!$%^*()-_+=";
  for (int i = 0; i < 200; ++i) {
    std::string pw;
    for (int n = 0; n < 6 + static_cast<int>(rng() % 20); ++n) pw += chars[rng() % chars.size()];
    const std::string url = "postgresql://user:" + pw + "@host:" + std::to_string(70000 + rng() % 1000) + "/db";
    try {
      parse_store_url(url);
      FAIL() << "a port above 65535 was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find(pw), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("user:***@host"), std::string::npos) << e.what();
      EXPECT_EQ(e.exit_code(), 2);
    }
  }
}

TEST(StoreUrl, MalformedRefusedWithExit2) {
  for (const std::string url : {"", "history.db", "mysql://db/h", "sqlite://", "sqlite:///", "sqlite:///tmp/h.db?mode=ro",
                                "postgresql://db:port/h", "postgresql://db:0/h", "sqlite:///tmp/dir/"}) {
    try {
      parse_store_url(url);
      FAIL() << url << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2) << url;
      EXPECT_NE(std::string(e.what()).find("invalid store URL"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpuscale::history
