#include "health/pid_namespace.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuscale::health {

namespace {
constexpr std::string_view kInitialPidNamespace = "pid:[4026531836]";  // PROC_PID_INIT_INO
}  // namespace

PidSpace classify_pid_space(std::string_view ns_link, std::string_view nspid_values) {
  // More than one NSpid entry: nested in a namespace below the one /proc was mounted from.
  std::istringstream in{std::string(nspid_values)};
  std::string entry;
  int entries = 0;
  while (in >> entry) ++entries;
  if (entries > 1) return PidSpace::separate;
  if (ns_link.rfind("pid:[", 0) != 0 || ns_link.back() != ']') return PidSpace::unknown;
  return ns_link == kInitialPidNamespace ? PidSpace::host : PidSpace::separate;
}

PidSpace this_pid_space(const std::string& proc_root) {
  std::error_code ec;
  const auto link = std::filesystem::read_symlink(proc_root + "/self/ns/pid", ec);
  std::string nspid;
  std::ifstream status(proc_root + "/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("NSpid:", 0) == 0) nspid = line.substr(6);
  return classify_pid_space(ec ? std::string() : link.string(), nspid);
}

}  // namespace gpuscale::health
