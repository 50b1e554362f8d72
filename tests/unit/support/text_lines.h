#pragma once
// The lines of a printed text (tests of the text outputs).
#include <sstream>
#include <string>
#include <vector>

namespace gpuscale::test {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace gpuscale::test
