#pragma once
// The members a stored run measured, each as its own series over time (pure;
// tests/unit/history/test_member_series.cpp). docs/history.md, "Each member against its own past".
//
// - gpu: one rank's value in each independent row (STREAM, GEMM, copies: a rank measures its own GPU),
//   keyed by the GPU's UUID where the file knows it (the CUDA backend), else by its host and its place
//   among that host's ranks in the row ("h1 slot 0": the CPU backend knows no UUID, and a rank number
//   moves when the job's host list does);
// - node: the median of a host's ranks in each independent row (trend.h's host series).
// - link, nic: the figures of the fleet rows' pair matrices (matrix_members.h: a node pair, a node's GPU
//   pair, a host's NIC on one rail).
// A collective's rank measures its whole group, so a collective's ranks make no GPU or node series.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "history/trend.h"

namespace gpuscale::history {

enum class MemberKind { gpu, node, link, nic };

std::string_view member_kind_name(MemberKind k);
// "gpu", "node", "link", "nic"; nullopt for anything else.
std::optional<MemberKind> member_kind_named(std::string_view name);

struct MemberSeries {
  MemberKind kind = MemberKind::gpu;
  std::string member;  // the GPU's UUID or "HOST slot N"; the node's host; matrix_members.h's names
  std::string host;
  Series series;       // key.host is the host, key.gpu the GPU's member name (empty for a node)
};

// Every member series of `kinds` in the rank values and the matrices' member values (each in run time
// order, as the store returns them).
std::vector<MemberSeries> member_series(const std::vector<RankPoint>& ranks, const std::vector<MemberPoint>& matrix,
                                        const std::vector<MemberKind>& kinds);

}  // namespace gpuscale::history
