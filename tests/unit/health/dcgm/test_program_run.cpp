// The subprocess seam (health/dcgm/program_run.h) with /bin/sh: exit status, stdout kept, the deadline
// kills the whole process group (a hung tool and its children), output past the limit is cut and
// killed, a missing program is "not started", and the PATH lookup finds what the shell would.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

#include "test_seed.h"

#include "health/dcgm/program_run.h"

namespace gpuscale::health {
namespace {

ProgramRun sh(const std::string& script, double timeout_s = 20, std::size_t limit = 1 << 20) {
  return run_program({"/bin/sh", "-c", script}, timeout_s, limit);
}

TEST(ProgramRun, ExitStatusAndOutput) {
  std::mt19937_64 rng(test_seed());
  const int code = static_cast<int>(rng() % 200);
  const auto word = std::to_string(rng());
  const auto r = sh("echo " + word + "; echo err >&2; exit " + std::to_string(code));
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_status, code);
  EXPECT_EQ(r.out, word + "\n");
  EXPECT_EQ(r.err_tail, "err\n");
}

TEST(ProgramRun, DeadlineKillsTheGroup) {
  // A child that keeps the pipe open (a tool's helper) and a parent that closed its output: both hang.
  for (const char* script : {"sleep 30 & sleep 30", "exec >/dev/null 2>&1; sleep 30"}) {
    const auto r = sh(script, 0.5);
    EXPECT_TRUE(r.timed_out) << script;
    EXPECT_FALSE(r.exit_status) << script;
    EXPECT_LT(r.seconds, 10) << script;
  }
}

TEST(ProgramRun, OutputPastTheLimitIsCutAndKilled) {
  const auto r = sh("while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done", 20, 100000);
  EXPECT_TRUE(r.too_much_output);
  EXPECT_EQ(r.out.size(), 100000u);
  EXPECT_LT(r.seconds, 10);
}

TEST(ProgramRun, MissingProgramAndPathLookup) {
  const auto r = run_program({"/nonexistent/dcgmi", "diag"}, 5, 1024);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.why_not_started.find("No such file"), std::string::npos) << r.why_not_started;

  char dir_template[] = "/tmp/gpuscale-path-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, tool = dir + "/fake-tool-" + std::to_string(getpid());
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  const auto name = tool.substr(dir.size() + 1);
  EXPECT_FALSE(find_program(name));
  { std::ofstream(tool) << "#!/bin/sh\nexit 0\n"; }
  setenv("PATH", ("/nonexistent:" + dir + ":" + old_path).c_str(), 1);
  EXPECT_FALSE(find_program(name)) << "a file that is not executable was taken";
  chmod(tool.c_str(), 0755);
  EXPECT_EQ(find_program(name), tool);
  EXPECT_EQ(find_program(tool), tool);
  EXPECT_FALSE(find_program(dir));  // a folder is no program
  setenv("PATH", old_path.c_str(), 1);
  unlink(tool.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace gpuscale::health
