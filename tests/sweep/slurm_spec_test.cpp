// The `slurm:` section's checks that an audit of the Slurm backend (2026-11-28) found missing:
// sbatch_args read as sbatch's getopt reads them, and a signal_before past the time limit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/sweep/slurm_fixtures.h"

namespace minrnn {
namespace {

using testing::kRuns;

// sbatch reads each item with getopt_long: an abbreviation, a short option with its value
// attached, several options in one item, and the options that leave nothing running (--wait,
// --hold) or strip the tasks' environment (--export) are refused, naming the key and the item.
TEST(SweepSlurmSpec, SbatchArgsAreCheckedAsGetoptReadsThem) {
  for (const char* item : {"--arr=5",
                           "--comment=x --array=7",
                           "-o/tmp/x%A.out",
                           "--no-req",
                           "--no-requeue",
                           "--wait",
                           "--hold",
                           "--export=NONE",
                           "-Qo/tmp/x",
                           "-W",
                           "-H",
                           "--test-only",
                           "--time=10",
                           "--clusters=c2",
                           "--chdir=/",
                           "--",
                           "-",
                           "--mem=1G#x",
                           "--constraint=\"a\"",
                           "--comm=x"}) {
    const std::string err = testing::sweep_error_of(kRuns + "slurm: {sbatch_args: [" +
                                                    nlohmann::json(item).dump() + "]}\n");
    EXPECT_NE(err.find("'slurm.sbatch_args'"), std::string::npos) << item << ": " << err;
    EXPECT_NE(err.find(item), std::string::npos) << item << ": " << err;
  }
  for (const char* item : {"--constraint=a100", "--exclusive", "-Cgpu", "--mem-per-cpu=2G",
                           "--gres-flags=enforce-binding", "-pdebug", "-Q", "--nice=10"})
    EXPECT_EQ(testing::sweep_error_of(kRuns + "slurm: {sbatch_args: [\"" + item + "\"]}\n"), "")
        << item;
}

// A warning at or before the task's start would signal it at once, and it would requeue forever.
TEST(SweepSlurmSpec, SignalBeforeMustComeWithinTheTimeLimit) {
  for (const char* slurm : {"{time: \"2\", signal_before: 120}", "{time: \"1\"}",
                            "{time: \"0:02:00\", signal_before: 120}", "{time: \"1:30\"}"}) {
    const std::string err = testing::sweep_error_of(kRuns + "slurm: " + slurm + "\n");
    EXPECT_NE(err.find("'slurm.signal_before'"), std::string::npos) << slurm << ": " << err;
    EXPECT_NE(err.find("slurm.time"), std::string::npos) << slurm << ": " << err;
  }
  for (const char* slurm : {"{time: \"3\"}", "{time: \"0-1\", signal_before: 3599}",
                            "{time: UNLIMITED, signal_before: 9999}", "{time: \"0\"}",
                            "{time: \"2:01\", signal_before: 120}"})
    EXPECT_EQ(testing::sweep_error_of(kRuns + "slurm: " + slurm + "\n"), "") << slurm;
}

}  // namespace
}  // namespace minrnn
