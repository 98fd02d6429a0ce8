// The `slurm:` section's checks that an audit of the Slurm backend (2026-11-28) found missing:
// sbatch_args read as sbatch's getopt reads them, and a signal_before past the time limit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

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

// The forms of partition, time, mem, gres, account and qos are checked by hand as the patterns
// they were checked by (std::regex, whose recursion a 100 000-character value overflowed): the two
// agree on every value here (signal_before 1: a short time is no refusal of its own), and a long
// value is a plain refusal.
TEST(SweepSlurmSpec, ValueFormsAreThePatternsTheyWere) {
  const std::string name = "^[A-Za-z0-9_.+-]+$";
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> keys = {
      {"partition",
       "^[A-Za-z0-9_.+-]+(,[A-Za-z0-9_.+-]+)*$",
       {"gpu", "gpu,gpu-long", "a.b+c_d", "a,,b", ",a", "a,", "a b", "", "gpu;x"}},
      {"time",
       "^([0-9]+(:[0-9]{1,2}){0,2}|[0-9]+-[0-9]{1,2}(:[0-9]{1,2}){0,2}|UNLIMITED|INFINITE)$",
       {"60", "1:30", "01:02:03", "1:2:3:4", "1-02", "1-02:00", "1-02:00:00", "1-123", "1-2-3",
        "-1", "1-", "1:", ":1", "123:456", "UNLIMITED", "INFINITE", "unlimited", "", "1:2:3:"}},
      {"mem", "^[0-9]+[KMGT]?$", {"16G", "4000M", "2048", "G", "16GB", "1.5G", "", "16g"}},
      {"gres",
       "^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*)*$",
       {"gpu:1", "gpu:a100:2", "gpu:1,shard:4", "gpu:", "gpu::1", ":1", "g-pu:1", "gpu:a.b-c",
        "gpu,", "gpu 1", ""}},
      {"account", name, {"proj_1", "a.b", "a b", "", "a/b"}},
      {"qos", name, {"normal", "high+", "x;y"}}};
  for (const auto& [key, pattern, values] : keys) {
    for (const std::string& value : values) {
      const std::string err = testing::sweep_error_of(
          kRuns + "slurm: {" + key + ": " + nlohmann::json(value).dump() + ", signal_before: 1}\n");
      EXPECT_EQ(err.empty(), std::regex_match(value, std::regex(pattern)))
          << key << " '" << value << "': " << err;
    }
    const std::string err = testing::sweep_error_of(kRuns + "slurm: {" + key + ": \"" +
                                                    std::string(100000, '1') + ":\"}\n");
    EXPECT_NE(err.find("'slurm." + key + "'"), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace minrnn
