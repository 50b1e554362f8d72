#pragma once
// The cells of the fleet benchmarks' pair matrices (docs/fleet.md): how the members' own measurements
// become the matrices every rank holds, and the node-pair matrix of a rail-by-rail measurement. Pure
// decisions on numbers, unit-tested without MPI; harness/benchmarks/fleet/fleet_pairs.cpp measures.
#include <array>
#include <cstddef>
#include <vector>

namespace gpuscale {

// An M x M pair matrix, row-major: value, spread below, spread above (NaN where not measured).
using PairCells = std::array<std::vector<double>, 3>;

// What one rank measured in one round (or step): 4 numbers, the cell's index over all matrices
// (matrix x M x M + i x M + j, NaN when it measured nothing that round), its value and its two spreads.
// Each rank sends one record per round and every rank gets them all: rounds x 4 numbers a rank, where
// every rank's whole set of M x M tables would be M^2 x rails x 3 (at 512 nodes and 8 rails, 6 million
// numbers from each of 4096 ranks).
inline constexpr std::size_t kCellRecord = 4;

// The records of every member (kCellRecord numbers each, in any order) placed into `matrices` tables of
// `m` x `m` cells, both orders (i, j) and (j, i) for an undirected matrix: the first finite value of a
// cell wins (both members of a pair report it, with the same figure). Records whose index is not a
// cell of them are ignored.
std::vector<PairCells> place_records(const std::vector<double>& records, std::size_t matrices, std::size_t m,
                                     bool directed);

// The node-pair cells of a pair measured rail by rail: each cell is its slowest rail's (a node pair is
// as fast as its slowest rail: training traffic waits for the last of them), with that rail's spreads;
// NaN where no rail measured it. `rail_of`, when given, gets the rail each cell came from (-1: none).
// The rails' tables must have one size.
PairCells slowest_rail(const std::vector<PairCells>& rails, std::vector<int>* rail_of = nullptr);

}  // namespace gpuscale
