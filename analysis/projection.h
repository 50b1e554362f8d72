#pragma once
// Capacity projection (docs/analysis.md, "Projection"): a latency-bandwidth (alpha-beta) model per
// collective and topology level, fitted to the measured times, predicts busbw at 2x and 4x the largest
// measured GPU count; a model of dp-step (data-parallel training step) efficiency built on the
// all_reduce fit predicts its weak-scaling efficiency there. Every figure here is a PROJECTION, not a
// measurement, and is labelled so wherever it is shown; each prediction carries the fit's error on
// the measured points.
//
// The model, for n ranks and a message of S bytes (nccl-tests' algbw bytes):
//   t(S, n) = alpha x steps(n) + factor(n) x S / beta
// steps(n): sequential latency steps of a ring algorithm (all_reduce 2(n-1), all_gather,
// reduce_scatter, alltoall, broadcast, reduce n-1, sendrecv 1); factor(n): nccl-tests' busbw factor,
// so beta is the bus bandwidth the sizes approach. alpha and beta are assumed not to change with n at a
// topology level. Fitted by least squares on relative residuals ((model - t) / t), so small messages
// (latency) count as much as large ones (bandwidth).
#include <optional>
#include <string>
#include <vector>

#include "analysis/result_set.h"

namespace gpuscale {

// When a projection is refused (docs/analysis.md, "Projection"): a model fitted at fewer distinct
// multi-GPU counts than this cannot tell how the time grows with the count, so it is not extrapolated;
// nor is one whose fit error (RMS relative error of the modelled time on the measured points) is
// above the bound: it does not describe even the points it was fitted to.
inline constexpr std::size_t kMinProjectionCounts = 2;
inline constexpr double kMaxProjectionFitError = 0.25;

struct FitPoint {
  int n = 0;          // ranks
  double bytes = 0;   // algbw bytes of one operation
  double time_us = 0; // measured time of one operation
};

struct AlphaBetaFit {
  std::string collective, topology;
  bool ok = false;
  std::string why;          // why there is no fit
  double alpha_us = 0;      // latency per step
  double beta_gbps = 0;     // bus bandwidth (GB/s)
  std::size_t points = 0;
  double rms_rel_error = 0;  // of the model's time on the fitted points
  std::vector<int> gpu_counts;
  double min_bytes = 0, max_bytes = 0;
};

// Latency steps of the ring algorithm for a collective key ("all_reduce", collectives/collective_table.h);
// 0 for an unknown key.
int latency_steps(const std::string& collective, int n);
// nccl-tests' busbw factor (collectives/collective_table.h); nullopt for an unknown key.
std::optional<double> bus_factor(const std::string& collective, int n);

AlphaBetaFit fit_alpha_beta(const std::string& collective, const std::vector<FitPoint>& points);
double model_time_us(const AlphaBetaFit& fit, int n, double bytes);
double model_busbw(const AlphaBetaFit& fit, int n, double bytes);  // GB/s

struct CollectiveProjection {
  std::string collective, topology;  // the level of the largest measured count
  // The fit the projection uses: ok false, with why, when there is none at the level or the projection
  // is refused (fewer than kMinProjectionCounts multi-GPU counts, a fit error above kMaxProjectionFitError).
  AlphaBetaFit fit;
  int measured_n = 0;
  double size_bytes = 0;                 // the largest measured size
  std::optional<double> measured_busbw;  // median busbw of the rows at (measured_n, size)
  std::optional<double> link_peak;       // expected peak of those rows (for efficiency)
  std::vector<int> target_n;             // 2x and 4x the largest measured count
  std::vector<double> predicted_busbw;   // at target_n, same size
};

struct DpStepPoint {
  int gpu_count = 0;
  double step_time_us = 0;
  double efficiency = 0;
};

struct DpStepProjection {
  std::string series;  // params label of the dp-step point
  bool ok = false;
  std::string why;
  double compute_us = 0;           // step time without exposed communication
  double gradient_bytes = 0, bucket_bytes = 0;
  double hidden_us = 0;            // communication the step overlaps (estimated)
  std::vector<DpStepPoint> measured, predicted;
  double rms_rel_error = 0;        // of the modelled step time at the measured counts (k >= 2)
};

struct Projection {
  int largest_count = 0;
  std::vector<int> targets;
  std::vector<AlphaBetaFit> fits;  // every (collective, topology) with collective rows at >= 2 GPUs
  std::vector<CollectiveProjection> collectives;
  std::vector<DpStepProjection> dp_steps;  // empty: the file has no dp-step rows
};

// Why a model fitted at `multi_gpu_counts` distinct counts of 2 or more GPUs, with this fit error, is
// not projected; nullopt when it may be.
std::optional<std::string> projection_refusal(std::size_t multi_gpu_counts, double rms_rel_error);

Projection project(const LoadedResult& run);
// Terminal text, headed "PROJECTION".
std::string format_projection(const Projection& p);

}  // namespace gpuscale
