// core/fault_kind_table.def as a whole: every row keeps the table's rules, and docs/fleet.md's two
// tables of kinds (GPUSCALE_TEST_FAULT's items, and the kinds detection power judges) say what the rows
// say, in their order, so neither can drift from the code. A new row is held to these without a change
// here: the failure prints the docs row to write.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/fault_kinds.h"

namespace gpuscale {
namespace {

// The cells of a Markdown table row ("  | a | b |" -> {"a", "b"}), trimmed; {} for a line that is not one.
std::vector<std::string> cells(std::string line) {
  const auto first = line.find_first_not_of(' ');
  if (first == std::string::npos || line[first] != '|') return {};
  line = line.substr(first + 1);
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = line.find('|')) != std::string::npos) {
    auto cell = line.substr(0, at);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
    line.erase(0, at + 1);
  }
  return out;
}

// The body rows of docs/fleet.md's table whose header row is `header` (empty when there is none).
std::vector<std::vector<std::string>> doc_table(const std::vector<std::string>& header) {
  std::ifstream in(GPUSCALE_FLEET_DOC);
  EXPECT_TRUE(in) << "cannot read " << GPUSCALE_FLEET_DOC;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line) && cells(line) != header) {
  }
  std::getline(in, line);  // |---|---|
  while (std::getline(in, line) && !cells(line).empty()) rows.push_back(cells(line));
  EXPECT_FALSE(rows.empty()) << "docs/fleet.md has no table headed | " << ::testing::PrintToString(header);
  return rows;
}

std::string code(std::string_view text) { return "`" + std::string(text) + "`"; }

TEST(FaultKindTable, EveryRowKeepsTheTablesRules) {
  std::set<std::string_view> names;
  for (const auto& k : fault_kinds()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " twice";
    EXPECT_EQ(k.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-"), std::string_view::npos) << k.name;
    EXPECT_EQ(fault_kind_named(k.name), k.kind) << k.name;
    EXPECT_EQ(fault_kind_name(k.kind), k.name);
    EXPECT_FALSE(k.acts.empty()) << k.name;
    // A kind without an item of its own is planted as a kind that has one, and judged: else it is nothing.
    if (!k.has_item()) {
      EXPECT_TRUE(fault_kind_info(k.planted_as).has_item()) << k.name;
      EXPECT_NE(k.judged_by, DetectionRule::none) << k.name;
      EXPECT_EQ(item_syntax(k), "") << k.name;
    }
    // One member of TimingFault holds both P and RATE (core/fault_plan.h): no item has both.
    EXPECT_FALSE(k.field == ItemField::probability && k.number == ItemNumber::rate) << k.name;
  }
  EXPECT_FALSE(fault_kind_named("slow-disk"));
  EXPECT_EQ(item_syntax(fault_kind_info(FaultKind::slow_gpu)), "slow-gpu:HOST[:GPU]:F");
  EXPECT_EQ(item_syntax(fault_kind_info(FaultKind::slow_link)), "slow-link:HOST:A-B:F");
  EXPECT_EQ(item_syntax(fault_kind_info(FaultKind::flip_bit)), "flip-bit:HOST:GPU:RATE");
  EXPECT_EQ(fault_kind_info(FaultKind::slow_storage).planted_as, FaultKind::slow_host);
}

// docs/fleet.md, "Tests without a cluster": one row per kind with an item, `syntax` | acts.
TEST(FaultKindTable, TheDocsListEveryItemAsTheTableDoes) {
  std::vector<std::vector<std::string>> want;
  for (const auto& k : fault_kinds())
    if (k.has_item()) want.push_back({code(item_syntax(k)), std::string(k.acts)});
  const auto docs = doc_table({"item", "where it acts"});
  EXPECT_EQ(docs.size(), want.size()) << "docs/fleet.md's items: one row per kind with an item";
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(i < docs.size() ? docs[i] : std::vector<std::string>{}, want[i])
        << "docs/fleet.md's item row " << i + 1 << " should read:\n  | " << want[i][0] << " | " << want[i][1] << " |";
}

// docs/fleet.md, "Detection power": one row per kind it judges, `name` | what is slow | the rule: ...
TEST(FaultKindTable, TheDocsListEveryKindDetectionPowerJudgesAsTheTableDoes) {
  std::vector<std::pair<std::string, std::string>> want;  // the name, the rule the "judged by" cell begins with
  for (const auto& k : fault_kinds())
    if (k.judged_by != DetectionRule::none)
      want.emplace_back(code(k.name), k.judged_by == DetectionRule::fleet ? "fleet: " : "history: ");
  std::vector<std::pair<std::string, std::string>> docs;
  for (const auto& row : doc_table({"kind", "what is slow", "judged by", "named when the rule names"})) {
    ASSERT_EQ(row.size(), 4u) << ::testing::PrintToString(row);
    const std::string rule = row[2].rfind("fleet: ", 0) == 0 ? "fleet: " : row[2].rfind("history: ", 0) == 0 ? "history: " : row[2];
    docs.emplace_back(row[0], rule);
  }
  EXPECT_EQ(docs, want) << "docs/fleet.md's detection-power kinds: their names in the table's order, each judged "
                           "by the rule the table says";
}

}  // namespace
}  // namespace gpuscale
