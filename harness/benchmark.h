#pragma once
// A benchmark is one registry entry (nvbandwidth's test cases are the model): a key, a description,
// its parameters and unit, the parameter points it measures, and a run function that measures one
// point on one rank through the backend interface. The harness runs every point at every GPU count
// and turns the ranks' measurements into result rows; benchmarks never see MPI ranks outside their
// group, files, or other benchmarks.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/options/options.h"
#include "kernels/device.h"
#include "harness/repetition_gate.h"
#include "peaks/peaks.h"
#include "world/world.h"

namespace gpuscale {

enum class Scope {
  independent,  // each of the k ranks works alone, all at once; aggregate = sum over ranks
  collective,   // the k ranks work together on one communicator
};

// How a row's scaling efficiency is set.
enum class Efficiency {
  per_device,    // independent work: aggregate(k) / (k x the 1-GPU value of the same point)
  link_peak,     // collectives: busbw / the expected peak of the slowest link crossed
  weak_scaling,  // a group's throughput(k) / (k x throughput(1)) of the same point (dp-step)
};

struct ParamDoc {
  std::string name;
  std::string description;
};

// What a benchmark needs to plan its points: the options and the device of rank 0 (the plan is made
// once, on rank 0, and sent to every rank so all ranks measure identical points).
struct PlanContext {
  const RunOptions& opts;
  const Device& device;
  std::string backend;
  int world_size = 1;
  std::vector<std::string> transports = {};  // Backend::collective_transports()
  int gpus_per_node = 1;  // the fewest ranks one node of the job holds (as the ranks act, world/test_hosts.h)
};

class Backend;

struct RunContext {
  Device& device;
  Communicator* comm;  // collectives only: a communicator over the group
  const Group& group;  // the ranks measuring at this GPU count
  const RunOptions& opts;
  std::uint64_t seed;
  Backend* backend = nullptr;  // workloads the backend builds from device and communicator (dp-step)
  // The host every world rank acts as (the fleet benchmarks find the nodes of their group with it).
  const std::vector<std::string>* hosts = nullptr;
  // Interleaved repetitions (harness/repetition_gate.h): set only for a benchmark whose
  // timed_repetitions has a count, while its groups take turns; nullptr: time without waiting.
  RepetitionGate* gate = nullptr;
};

// One rank's measurement of one point.
struct RankMeasurement {
  std::vector<double> reps;    // the row's unit, one value per timed repetition
  bool valid = true;           // verification passed
  bool failed = false;         // an error stopped the measurement
  bool skipped = false;        // the point does not apply here (e.g. dtype unsupported)
  std::string message;         // why invalid / failed / skipped
  nlohmann::json metrics = nlohmann::json::object();      // this rank's extra figures
  nlohmann::json row_metrics = nlohmann::json::object();  // group-wide figures, identical on every member
  std::optional<double> aggregate;  // collectives: the group's figure (busbw at the reduced time)
};

// What one point asks of each rank, known before anything is measured: its memory, checked against
// what the device (the host, for the CPU backend) has free before the run starts
// (harness/plan/memory_plan.h), and its work, which the watchdog's default budget scales with
// (harness/guard/watchdog.h). Estimates err on the large side; all sizes are 64-bit.
struct DemandContext {
  const RunOptions& opts;
  std::string backend;  // "cpu", "cuda"
  int ranks = 1;        // the largest group the point runs on (the world size)
  int nodes = 0;        // the job's nodes (the fleet benchmarks' pairs), 0 when not known: at most `ranks`
  double comm_init_s = 0;  // the slowest communicator creation measured so far (harness/benchmarks/comm_timing.h), 0: none
};

struct PointDemand {
  std::uint64_t memory_bytes = 0;  // per rank, at most (saturating: UINT64_MAX never fits)
  std::string memory_what;         // what the bytes are: "3 arrays of 4.00 GiB"
  double bytes = 0;                // bytes read, written or sent per rank over the whole point
  double flops = 0;                // operations per rank over the whole point
  // The transport's own timeout (NCCL's -T), when it has one: the watchdog lets it act first, since it
  // aborts the communicator and names the peers that never arrived (harness/guard/watchdog.h).
  double transport_timeout_s = 0;
  // Seconds the point spends besides its bytes and flops: the fleet benchmarks make a communicator
  // for every round of pairs (the watchdog budget grows with them).
  double setup_s = 0;
  // Seconds the point lasts on any device (a burn-in window, harness/benchmarks/burn/burn_plan.h): the plan's estimate
  // and the watchdog's budget take them as they are, not scaled by a device's rates.
  double fixed_s = 0;
  // Communicators the point makes itself, alive at once, besides its GPU count's (train-step's, one per
  // layout dimension of 2 or more ranks; the fleet benchmarks' pair): the memory plan counts them.
  int communicators = 0;
};

struct PeakContext {
  const DeviceInfo& device;  // rank 0's device
  const PeakTable* table;    // may be null
  const LinkPeaks& links;
};

// What a benchmark is, as `gpuscale list` shows it: one value, given when the benchmark is made.
struct BenchmarkInfo {
  std::string key;          // "stream.triad", "gemm", "all_reduce"
  std::string group;        // "stream", "gemm", "collective": selectable as a whole
  std::string description;
  std::string unit;         // "GB/s", "TFLOP/s"
  Scope scope = Scope::independent;
  Efficiency efficiency = Efficiency::per_device;
  std::vector<ParamDoc> parameters;
  std::vector<std::string> backends;  // backends it runs on
  // Measured once, at the job's full size, not at every GPU count: the fleet benchmarks, which split
  // the whole job into node pairs or GPU pairs themselves (docs/fleet.md).
  bool whole_job = false;
  // Left out of the default selection and of "all" (selected by its key or group): the fleet
  // benchmarks, whose node-pair tournament costs N - 1 rounds on N nodes (docs/fleet.md).
  bool opt_in = false;
};

// The interface the run loop, the plan and resume use: a point's parameters travel as JSON (they are
// written to the plan and the result file). Families implement it through PointBenchmark below.
class Benchmark {
 public:
  explicit Benchmark(BenchmarkInfo info) : info_(std::move(info)) {}
  virtual ~Benchmark() = default;
  const BenchmarkInfo& info() const { return info_; }
  const std::string& key() const { return info_.key; }
  const std::string& group() const { return info_.group; }
  const std::string& description() const { return info_.description; }
  const std::string& unit() const { return info_.unit; }
  Scope scope() const { return info_.scope; }
  Efficiency efficiency() const { return info_.efficiency; }
  const std::vector<ParamDoc>& parameters() const { return info_.parameters; }
  const std::vector<std::string>& backends() const { return info_.backends; }
  // Whether it runs on this device at all (e.g. a STREAM kernel the backend lacks).
  virtual bool available(const Device& device) const { (void)device; return true; }
  virtual std::vector<nlohmann::json> cases(const PlanContext& ctx) const = 0;
  virtual RankMeasurement run(const nlohmann::json& params, RunContext& ctx) const = 0;
  // How many timed repetitions run() times through RunContext::gate (harness/repetition_gate.h), or
  // nothing for a benchmark whose repetitions cannot wait for other groups' turns (they keep their
  // turn blocked): every rank, measuring or idle, must know the turns of a row.
  virtual std::optional<int> timed_repetitions(const nlohmann::json& params, const RunOptions& opts) const {
    (void)params;
    (void)opts;
    return std::nullopt;
  }
  // The figure this point is set against: per device for independent work, the link for collectives.
  virtual ExpectedPeak expected_peak(const nlohmann::json& params, const PeakContext& ctx,
                                     const std::string& topology) const = 0;
  // Memory and work of one point (see PointDemand).
  virtual PointDemand demand(const nlohmann::json& params, const DemandContext& ctx) const = 0;

 private:
  BenchmarkInfo info_;
};

// A family's benchmark: a point's JSON params are parsed once, by point(), into the family's own struct
// (its dtype, sizes, shape ...), and measuring, rating and planning the point all work on that struct.
template <typename Point>
class PointBenchmark : public Benchmark {
 public:
  using Benchmark::Benchmark;
  // Throws (nlohmann::json's errors, gpuscale::Error) for params this family did not write.
  virtual Point point(const nlohmann::json& params) const = 0;

  RankMeasurement run(const nlohmann::json& params, RunContext& ctx) const final { return measure(point(params), ctx); }
  ExpectedPeak expected_peak(const nlohmann::json& params, const PeakContext& ctx,
                             const std::string& topology) const final {
    return peak_of(point(params), ctx, topology);
  }
  PointDemand demand(const nlohmann::json& params, const DemandContext& ctx) const final {
    return demand_of(point(params), ctx);
  }

 protected:
  virtual RankMeasurement measure(const Point& p, RunContext& ctx) const = 0;
  virtual ExpectedPeak peak_of(const Point& p, const PeakContext& ctx, const std::string& topology) const = 0;
  virtual PointDemand demand_of(const Point& p, const DemandContext& ctx) const = 0;
};

}  // namespace gpuscale
