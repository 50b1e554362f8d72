// harness/run_metadata: the environment allow-list, Slurm job info, cluster name precedence,
// timestamps and the default result path.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "harness/run/run_metadata.h"
#include "result_doc.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using namespace std::chrono;

TEST(Metadata, EnvironmentAllowList) {
  const std::vector<std::string> env = {"NCCL_DEBUG=INFO",
                                        "CUDA_VISIBLE_DEVICES=0,1",
                                        "SLURM_JOB_ID=42",
                                        "OMPI_COMM_WORLD_RANK=3",
                                        "UCX_TLS=rc,sm",
                                        "OMP_NUM_THREADS=8",
                                        "HOME=/root",
                                        "PATH=/usr/bin",
                                        "AWS_SECRET_ACCESS_KEY=s3cr3t",
                                        "MY_NCCL_X=1",
                                        "nccl_debug=lower",
                                        "CUDA=no-underscore",
                                        "OMPX_Y=1",
                                        "SLURMD_NODENAME=n1",
                                        "NCCL_ALGO=a=b=c",
                                        "NO_EQUALS_SIGN",
                                        "NCCL_EMPTY=",
                                        "=value"};
  const auto got = allowed_environment(env);
  const std::map<std::string, std::string> want = {
      {"NCCL_DEBUG", "INFO"}, {"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_JOB_ID", "42"}, {"OMPI_COMM_WORLD_RANK", "3"},
      {"UCX_TLS", "rc,sm"},   {"OMP_NUM_THREADS", "8"},        {"NCCL_ALGO", "a=b=c"}, {"NCCL_EMPTY", ""}};
  EXPECT_EQ(got, want);
}

TEST(Metadata, EnvironmentDropsSecretLikeNamesUnderAllowedPrefixes) {
  const std::vector<std::string> env = {"SLURM_JWT=eyJhbGciOi", "SLURM_JOB_ID=42", "NCCL_IB_TOKEN=t",
                                        "CUDA_api_key=k", "OMPI_MCA_orte_precondition_transports=abcd-ef01",
                                        "UCX_PASSWORD=p", "UCX_PASSWD=p", "OMP_Secret_X=s", "SLURM_CREDENTIALS=c",
                                        "NCCL_SOCKET_IFNAME=ib0", "SLURM_SESSION_COOKIE=c", "OMPI_MCA_btl=self,tcp"};
  const std::map<std::string, std::string> want = {
      {"SLURM_JOB_ID", "42"}, {"NCCL_SOCKET_IFNAME", "ib0"}, {"OMPI_MCA_btl", "self,tcp"}};
  EXPECT_EQ(allowed_environment(env), want);
  for (const char* name : {"SLURM_JWT", "MY_TOKEN", "x_secret", "db_password", "ApiKey", "AWS_CREDENTIAL_FILE",
                           "OMPI_MCA_orte_precondition_transports"})
    EXPECT_TRUE(secret_like_name(name)) << name;
  for (const char* name : {"SLURM_JOB_ID", "NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "OMPI_MCA_orte_base", "UCX_TLS"})
    EXPECT_FALSE(secret_like_name(name)) << name;
}

TEST(Metadata, EnvironmentAllowListRandomNames) {
  const std::vector<std::string> allowed = {"NCCL_", "CUDA_", "SLURM_", "OMPI_", "UCX_", "OMP_"};
  const std::vector<std::string> denied = {"", "X", "GPUSCALE_", "LD_", "SSH_", "NCCL", "OMPX_", "SLURMX_", "_NCCL_"};
  std::mt19937 rng(107);
  std::vector<std::string> env;
  std::map<std::string, std::string> want;
  for (int i = 0; i < 300; ++i) {
    const bool ok = rng() % 2;
    const auto& prefix = ok ? allowed[rng() % allowed.size()] : denied[rng() % denied.size()];
    const std::string name = prefix + "V" + std::to_string(i), value = "val" + std::to_string(rng() % 1000);
    env.push_back(name + "=" + value);
    if (ok) want[name] = value;
  }
  EXPECT_EQ(allowed_environment(env), want);
  // The allow-list is exactly what the schema accepts.
  auto doc = testing_doc::minimal_result_doc();
  doc["environment"] = allowed_environment(env);
  EXPECT_EQ(validate_result_json(doc), "");
}

// A value (or name) that is not UTF-8 is recorded with its bad bytes escaped: the document still dumps
// (nlohmann refused it, and the run died at its first write with no result file) and validates.
TEST(Metadata, EnvironmentNotUtf8IsRecordedEscaped) {
  const std::vector<std::string> env = {"NCCL_BAD=x\xff", "CUDA_MIX=\xc3\xa9\xc3(\xed\xa0\x80", "OMP_\xfe=1",
                                        "NCCL_GOOD=caf\xc3\xa9"};
  const std::map<std::string, std::string> want = {{"NCCL_BAD", "x\\xff"}, {"CUDA_MIX", "\xc3\xa9\\xc3(\\xed\\xa0\\x80"},
                                                   {"OMP_\\xfe", "1"}, {"NCCL_GOOD", "caf\xc3\xa9"}};
  const auto got = allowed_environment(env);
  EXPECT_EQ(got, want);
  auto doc = testing_doc::minimal_result_doc();
  doc["environment"] = got;
  EXPECT_NO_THROW((void)doc.dump());
  EXPECT_EQ(validate_result_json(doc), "");
}

TEST(Metadata, ProcessEnvironmentIsRead) {
  ASSERT_EQ(setenv("NCCL_GPUSCALE_UNIT_TEST", "on", 1), 0);
  ASSERT_EQ(setenv("GPUSCALE_UNIT_TEST_PRIVATE", "hidden", 1), 0);
  const auto env = process_environment();
  EXPECT_NE(std::find(env.begin(), env.end(), "NCCL_GPUSCALE_UNIT_TEST=on"), env.end());
  const auto allowed = allowed_environment(env);
  EXPECT_EQ(allowed.at("NCCL_GPUSCALE_UNIT_TEST"), "on");
  EXPECT_EQ(allowed.count("GPUSCALE_UNIT_TEST_PRIVATE"), 0u);
  unsetenv("NCCL_GPUSCALE_UNIT_TEST");
  unsetenv("GPUSCALE_UNIT_TEST_PRIVATE");
}

TEST(Metadata, SlurmInfo) {
  EXPECT_TRUE(slurm_info({}).is_null());
  EXPECT_TRUE(slurm_info({{"SLURM_CLUSTER_NAME", "alps"}, {"SLURM_NTASKS", "8"}}).is_null());  // not inside a job

  const std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", "123456"},     {"SLURM_JOB_PARTITION", "gpu"},
      {"SLURM_CLUSTER_NAME", "alps"}, {"SLURM_JOB_NODELIST", "nid[001-002]"},
      {"SLURM_NTASKS", "8"},          {"SLURM_GPUS_PER_NODE", "4"}};
  const auto s = slurm_info(env);
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["job_id"], "123456");
  EXPECT_EQ(s["partition"], "gpu");
  EXPECT_EQ(s["cluster"], "alps");
  EXPECT_EQ(s["nodelist"], "nid[001-002]");
  EXPECT_EQ(s["ntasks"], "8");
  EXPECT_EQ(s["gpus_per_node"], "4");
  EXPECT_TRUE(s["array_job_id"].is_null());
  EXPECT_TRUE(s["job_name"].is_null());
  auto doc = testing_doc::minimal_result_doc();
  doc["slurm"] = s;
  EXPECT_EQ(validate_result_json(doc), "");
  doc["slurm"] = slurm_info({{"SLURM_JOB_ID", "1"}});  // only the job id: everything else null
  EXPECT_EQ(validate_result_json(doc), "");
}

TEST(Metadata, SlurmInfoRecordsJobNodesAndGpus) {
  const auto s = slurm_info({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "node[1-2]"}, {"SLURM_JOB_NUM_NODES", "2"},
                             {"SLURM_GPUS_ON_NODE", "4"}, {"SLURM_JOB_GPUS", "0,1,2,3"}, {"SLURM_NTASKS_PER_NODE", "4"},
                             {"SLURM_STEP_ID", "0"}, {"SLURM_CLUSTER_NAME", "ci"}});
  EXPECT_EQ(s["job_id"], "42");
  EXPECT_EQ(s["nodelist"], "node[1-2]");
  EXPECT_EQ(s["gpus_on_node"], "4");
  EXPECT_EQ(s["job_gpus"], "0,1,2,3");
  EXPECT_EQ(s["ntasks_per_node"], "4");
  EXPECT_TRUE(s["gpus_per_task"].is_null());
  EXPECT_TRUE(s["partition"].is_null());
}

TEST(Metadata, SlurmInfoTellsSrunFromMpirunInsideTheAllocation) {
  EXPECT_EQ(slurm_info({{"SLURM_JOB_ID", "1"}, {"SLURM_STEP_ID", "0"}})["launcher"], "srun");
  // mpirun inside the job: SLURM_* are inherited from the batch step, Open MPI's variables decide.
  EXPECT_EQ(slurm_info({{"SLURM_JOB_ID", "1"}, {"SLURM_STEP_ID", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}})["launcher"], "mpirun");
  EXPECT_TRUE(slurm_info({{"SLURM_JOB_ID", "1"}})["launcher"].is_null());
}

TEST(Metadata, ClusterNamePrecedence) {
  const std::map<std::string, std::string> slurm = {{"SLURM_CLUSTER_NAME", "alps"}};
  auto c = cluster_name("mine", slurm, "nid001");
  EXPECT_EQ(c.name, "mine");
  EXPECT_EQ(c.source, "--cluster");
  c = cluster_name("", slurm, "nid001");
  EXPECT_EQ(c.name, "alps");
  EXPECT_EQ(c.source, "SLURM_CLUSTER_NAME");
  c = cluster_name("", {{"SLURM_CLUSTER_NAME", ""}}, "nid001");
  EXPECT_EQ(c.name, "nid001");
  EXPECT_EQ(c.source, "hostname");
  c = cluster_name("", {}, "login1");
  EXPECT_EQ(c.name, "login1");
  EXPECT_EQ(c.source, "hostname");
}

TEST(Metadata, DefaultResultPath) {
  const auto t = sys_days{year{2026} / November / 29} + hours{18} + minutes{5} + seconds{9};
  EXPECT_EQ(default_result_path("alps", t, ""), "results/alps-20261129T180509Z.json");
  EXPECT_EQ(default_result_path("alps", t, "123456"), "results/alps-20261129T180509Z-123456.json");
  EXPECT_EQ(default_result_path("a/b c", t, ""), "results/a_b_c-20261129T180509Z.json");
  EXPECT_EQ(default_result_path("../etc", t, ""), "results/cluster.._etc-20261129T180509Z.json");
  EXPECT_EQ(default_result_path("", t, ""), "results/cluster-20261129T180509Z.json");
  EXPECT_EQ(default_result_path("my-cluster_2.x", t, "7"), "results/my-cluster_2.x-20261129T180509Z-7.json");
  // A job id is data from the environment: it never leaves results/ or names a hidden file.
  EXPECT_EQ(default_result_path("alps", t, "x/../../../tmp/evil"), "results/alps-20261129T180509Z-x_.._.._.._tmp_evil.json");
  EXPECT_EQ(default_result_path("alps", t, "../x"), "results/alps-20261129T180509Z-job.._x.json");
  EXPECT_EQ(default_result_path("alps", t, "7\n\x1b[2J"), "results/alps-20261129T180509Z-7___2J.json");
  EXPECT_EQ(default_result_path("h\xc3\xa9", t, ""), "results/h__-20261129T180509Z.json");

  const std::regex format(R"(results/[A-Za-z0-9_.-]+-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\.json)");
  std::mt19937_64 rng(109);
  for (int i = 0; i < 100; ++i) {
    std::string name;
    for (int j = 0; j < 1 + static_cast<int>(rng() % 12); ++j) name += static_cast<char>(32 + rng() % 95);
    const auto when = system_clock::time_point{seconds{static_cast<long long>(rng() % 4000000000ull)}};
    const auto p = default_result_path(name, when, rng() % 2 ? "" : std::to_string(rng() % 1000000));
    EXPECT_TRUE(std::regex_match(p, format)) << "'" << name << "' -> " << p;
    EXPECT_EQ(p.find('/', 8), std::string::npos) << p;  // one directory level only
  }
}

}  // namespace
}  // namespace gpuscale
