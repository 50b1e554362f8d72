#pragma once
// Whether the PIDs NVML reports can be compared with this job's own. NVML answers in the host's PID
// namespace; a process in a pod without hostPID (or any container with a PID namespace of its own)
// knows itself by another number, so comparing the two lists would call this job's own process
// "another process using the GPU". The classification is pure; this_pid_space() reads /proc.
#include <string>
#include <string_view>

namespace gpuscale::health {

enum class PidSpace {
  host,      // the initial PID namespace: NVML's PIDs are ours
  separate,  // a PID namespace of our own: NVML's PIDs are the host's, not comparable with ours
  unknown,   // /proc told nothing (no ns link, no NSpid line): compared as before, the only evidence left
};

// From the target of /proc/self/ns/pid ("pid:[4026531836]", empty when unreadable) and the values of
// the NSpid line of /proc/self/status ("463" or "81234\t7", empty when absent). NSpid has one entry per
// namespace the process is in, as seen from /proc's mounter: more than one is a nested namespace. The
// initial namespace's inode is fixed by the kernel (PROC_PID_INIT_INO, 0xEFFFFFFC).
PidSpace classify_pid_space(std::string_view ns_link, std::string_view nspid_values);

// The classification of this process, read from `proc_root` (/proc; tests pass a made tree).
PidSpace this_pid_space(const std::string& proc_root = "/proc");

}  // namespace gpuscale::health
