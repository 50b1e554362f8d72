#pragma once
// The refusals of bad input (flags, GPUSCALE_* variables): one line and exit 2.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace gpuscale::test {

// The message of the gpuscale::Error that `f` throws (exit 2 and one line checked), or "" when it throws none.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
    return what;
  }
  return "";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace gpuscale::test
