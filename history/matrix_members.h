#pragma once
// The links and NICs a fleet row's pair matrices measured (rows.matrices[], docs/fleet.md), each as one
// figure of the run, so that the history can judge each against its own past (member_series.h). Pure;
// tests/unit/history/test_matrix_members.cpp.
//
// - link, from a node-pair matrix (kind "node"): the two hosts, "a~b" with the names in order, so that
//   a run listing its hosts in another order keeps the series; its cell's busbw;
// - link, from a node's GPU-pair matrix (kind "gpu"): "HOST GPUi~GPUj" by the matrix's labels;
// - nic, from a rail's matrix (kind "rail", rail i): "HOST rail i", the median of the host's cells on
//   that rail (its NIC, cable and switch port carry every one of them; one slow peer moves no median).
// A directed matrix's two cells of a pair give the link its slower direction. A cell's band is its
// spread (the min..max of its repetitions); a member of several cells takes their median spreads.
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale::history {

struct MemberRecord {
  int row_index = 0;
  std::string kind;    // "link" or "nic"
  std::string member;  // "a~b", "h1 GPU0~GPU1", "h1 rail 0"
  std::string host;    // its hosts, comma-separated
  double value = 0;
  double noise_down = 0, noise_up = 0;
  int reps = 0;        // 2 when the cells carry spreads (the matrix keeps no count), else 0: never judged
};

// Every link and NIC of `row`'s matrices (none without matrices), each member once (the first).
std::vector<MemberRecord> matrix_members(const ResultRow& row, int row_index);

}  // namespace gpuscale::history
