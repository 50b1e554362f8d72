#include "collectives/nccl/nccl_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpuscale::nccl {
namespace {

std::optional<std::string> too_old(int code, int major, int minor, const char* what) {
  if (code >= version_code(major, minor, 0)) return std::nullopt;
  return fmt::format("NCCL {} has no {} (added in {}.{})", version_text(code), what, major, minor);
}

std::string env_or(const std::map<std::string, std::string>& env, const char* name, const char* fallback) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty() ? it->second : fallback;
}

}  // namespace

int version_code(int major, int minor, int patch) {
  return major <= 2 && minor <= 8 ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
}

std::string version_text(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::optional<std::string> unsupported(const CollectiveCase& c, int code, int cc_major) {
  const auto& spec = collective_spec(c.coll);
  if (!dtype_used_by(c.dtype, kForCollectives)) return fmt::format("NCCL has no {} type", dtype_name(c.dtype));
  switch (c.dtype) {
#define GPUSCALE_DTYPE_NCCL(id, nccl_enum, since_major, since_minor, what, reduce_min_cc)                        \
  case DType::id:                                                                                             \
    if (version_code(since_major, since_minor, 0) > version_code(2, 0, 0))                                    \
      if (auto why = too_old(code, since_major, since_minor, what)) return why;                               \
    if (spec.reduces && reduce_min_cc > 0 && cc_major > 0 && cc_major < reduce_min_cc)                       \
      return fmt::format("NCCL has {} reductions only on compute capability {}.0 and newer (this GPU: {}.x)", \
                         dtype_name(c.dtype), reduce_min_cc, cc_major);                                       \
    break;
#include "core/dtype_table.def"
    default: return fmt::format("NCCL has no {} type", dtype_name(c.dtype));
  }
  if (spec.reduces && c.op == RedOp::avg)
    if (auto why = too_old(code, 2, 10, "avg reduction")) return why;
  if (c.in_place && !spec.in_place) return fmt::format("{} has no in-place variant", spec.name);
  if (c.in_place && c.coll == Collective::sendrecv)
    return std::string("in-place sendrecv is not measured: nccl-tests runs it on one buffer for both directions "
                       "and does not check it (the result is undefined)");
  return std::nullopt;
}

NetLogPlan net_log_plan(const std::map<std::string, std::string>& nccl_env, const std::string& dir) {
  NetLogPlan p;
  if (auto it = nccl_env.find("NCCL_DEBUG"); it != nccl_env.end() && !it->second.empty()) {
    p.why_not = fmt::format("not recorded: NCCL_DEBUG={} is the user's (its log says which network NCCL used)",
                            it->second);
    return p;
  }
  if (dir.empty()) {
    p.why_not = "not recorded: no folder for NCCL's log";
    return p;
  }
  p.path = dir + "/nccl.%h.%p.log";
  p.set = {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,NET"}, {"NCCL_DEBUG_FILE", p.path}};
  return p;
}

std::string NetLogFolder::keep() {
  if (dir_.empty()) return "";
  kept_ = true;
  return fmt::format("; NCCL's log is kept in {} (this rank's host)", dir_);
}

bool NetLogFolder::remove_at_exit() const { return !dir_.empty() && !kept_; }

nlohmann::json network_from_log(std::string_view log) {
  // The rest of the last line holding `marker` (clipped: a NIC list can be long), or nullopt.
  const auto rest_of_last = [&](std::string_view marker) -> std::optional<std::string> {
    const auto at = log.rfind(marker);
    if (at == std::string_view::npos) return std::nullopt;
    auto rest = log.substr(at + marker.size());
    rest = rest.substr(0, std::min(rest.find('\n'), std::size_t{240}));
    while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.remove_suffix(1);
    return std::string(rest);
  };
  const auto network = rest_of_last("NCCL INFO Using network ");
  if (!network) return nullptr;
  nlohmann::json j = {{"network", *network}, {"sockets", *network == "Socket"}};
  const auto devices = rest_of_last(fmt::format("NCCL INFO NET/{} : Using", *network));
  j["devices"] = devices ? nlohmann::json(*devices) : nlohmann::json(nullptr);
  return j;
}

bool native_alltoall(int compiled_code, int runtime_code, bool found) {
  const int v = version_code(2, 28, 0);
  return compiled_code >= v && runtime_code >= v && found;
}

std::uint64_t iteration_shift(std::uint64_t op_bytes, std::uint64_t span_bytes, std::uint64_t iter) {
  if (op_bytes == 0 || span_bytes < op_bytes) return 0;
  return op_bytes * (iter % (span_bytes / op_bytes));
}

WaitVerdict wait_verdict(bool complete, bool async_error, double elapsed_s, double timeout_s) {
  if (async_error) return WaitVerdict::failed;
  if (complete) return WaitVerdict::done;
  if (timeout_s > 0 && elapsed_s > timeout_s) return WaitVerdict::timed_out;
  return WaitVerdict::wait;
}

nlohmann::json row_details(const CollectiveSpec& spec, int nranks, int cc_major,
                           const std::map<std::string, std::string>& env) {
  const char* chosen = "chosen by NCCL per call (its API does not report it; NCCL_DEBUG=INFO logs it)";
  nlohmann::json j = {{"nccl_algo", env_or(env, "NCCL_ALGO", chosen)}, {"nccl_proto", env_or(env, "NCCL_PROTO", chosen)}};
  const bool nvls_off = env_or(env, "NCCL_NVLS_ENABLE", "") == "0";
  if (spec.reduces && nranks > 1 && cc_major >= 9 && !nvls_off)
    j["busbw_note"] =
        "NCCL may reduce inside the NVSwitch (NVLS, NVLink SHARP) on this GPU: busbw then counts bytes the "
        "links did not carry and can exceed the NVLink peak; NCCL_NVLS_ENABLE=0 gives the wire figure";
  return j;
}

ErrorAction error_action(int nccl_result, bool async, bool timed_out) {
  if (timed_out) return ErrorAction::abort;
  if (nccl_result == kNcclSuccess || nccl_result == kNcclInProgress) return ErrorAction::none;
  return async ? ErrorAction::abort : ErrorAction::fail_row;
}

}  // namespace gpuscale::nccl

namespace gpuscale::nccl {

SplitArgs split_args(bool member, int first_member_world_rank, int group_rank) {
  if (!member || first_member_world_rank < 0) return {};
  return {first_member_world_rank, group_rank};
}

int MemoryLedger::add(std::uint64_t bytes) {
  const int entry = next_++;
  entries_[entry] = bytes;
  held_ += bytes;
  peak_ = std::max(peak_, held_);
  return entry;
}

void MemoryLedger::remove(int entry) {
  const auto it = entries_.find(entry);
  if (it == entries_.end()) return;
  held_ -= it->second;
  entries_.erase(it);
}

std::uint64_t MemoryLedger::take_peak() {
  const std::uint64_t out = std::max(peak_, held_);
  peak_ = held_;
  return out;
}

}  // namespace gpuscale::nccl
