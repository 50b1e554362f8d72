#include <gtest/gtest.h>

#include "core/error.h"
#include "core/units.h"

namespace gpuscale {
namespace {

TEST(ParseSize, BinarySuffixes) {
  EXPECT_EQ(parse_size("8", "x"), 8u);
  EXPECT_EQ(parse_size("1K", "x"), 1024u);
}

}  // namespace
}  // namespace gpuscale
