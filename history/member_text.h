#pragma once
// What `gpuscale history members` prints (cli/cmd_history.cpp): each member that stepped down against
// its own past, and the power of the rule from each series' own noise (self_baseline.h). Text for
// people, JSON for scripts.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/member_series.h"
#include "history/self_baseline.h"

namespace gpuscale::history {

// verdicts[i] judges members[i].series.
std::string members_text(const std::vector<MemberSeries>& members, const std::vector<SelfVerdict>& verdicts);
nlohmann::json members_json(const std::vector<MemberSeries>& members, const std::vector<SelfVerdict>& verdicts);

}  // namespace gpuscale::history
