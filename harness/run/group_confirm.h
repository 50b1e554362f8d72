#pragma once
// Sequential tiling's third turn (docs/fleet.md "Outliers"): after its passes (two blocked, or one of
// interleaved repetitions), a group that still looks slow is measured once more, alone, and keeps the
// better. Two passes keep a group
// that one moment's stall slowed; on a machine of more ranks than cores a process is now and then slow
// through both (a STREAM 1-GPU group 22-39% below the median in both passes with nothing planted,
// docs/measurements.md), where a sick GPU or memory is slow in every turn. Pure: numbers in, the
// groups to measure again out; harness/run/row_measure.cpp measures them.
#include <cstddef>
#include <vector>

namespace gpuscale {

// The groups to measure once more, from each group's figure after its passes (higher is better;
// NaN where its kept pass failed, was wrong or skipped: such a pass is never measured away): those
// more than half of `fraction` below the median of the figures, the lowest first, at most `cap`. Half:
// the figure here (a group's median repetition) is not the row's, so the net is cast wider than the
// outlier rule; a healthy group measured again costs one turn. None in a population under 3, where
// the rule names nothing either.
std::vector<std::size_t> groups_to_confirm(const std::vector<double>& figures, double fraction, std::size_t cap);

// The most groups of `groups` measured again: an eighth of them, at least 2 (one odd group or two is a
// verdict; more are not one odd group, and the budget of a turn each stays small next to two passes).
std::size_t confirm_cap(std::size_t groups);

}  // namespace gpuscale
