#include "world/agree.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpuscale {

void agree(const World& world, const std::function<void()>& step) {
  nlohmann::json mine = {{"ok", true}};
  try {
    step();
  } catch (const Error& e) {
    mine = {{"ok", false}, {"code", e.exit_code()}, {"message", e.what()}};
  } catch (const std::exception& e) {
    mine = {{"ok", false}, {"code", static_cast<int>(kExitInvalidResult)}, {"message", e.what()}};
  }
  const auto all = world.allgather(mine.dump());
  int first_bad = -1, bad = 0;
  std::string first_msg;
  bool same = true;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto j = nlohmann::json::parse(all[r]);
    if (j["ok"].get<bool>()) continue;
    ++bad;
    if (first_bad < 0) {
      first_bad = static_cast<int>(r);
      first_msg = j["message"].get<std::string>();
      mine = j;
    } else if (j["message"].get<std::string>() != first_msg) {
      same = false;
    }
  }
  if (first_bad < 0) return;
  const bool everywhere = bad == static_cast<int>(all.size()) && same;
  const auto msg = everywhere ? first_msg
                              : fmt::format("rank {} ({}): {}", first_bad,
                                            world.hosts()[static_cast<std::size_t>(first_bad)], first_msg);
  throw AgreedError(msg, mine["code"].get<int>());
}

}  // namespace gpuscale
