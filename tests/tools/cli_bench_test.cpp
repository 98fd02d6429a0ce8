// The `minrnn bench` commands as a user runs them: where a bench files its table and its CSV,
// and bench train's rounds beside a peer (the benches' numbers themselves are
// docs/benchmarks.md's).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

using CliResult = testing::CommandResult;
using testing::lines_of;
using testing::read_text;
using testing::run_minrnn;
using testing::write_text;

// A bench prints its table, files it in the markdown log and writes the same numbers as CSV.
TEST(Cli, BenchFilesMarkdownAndCsv) {
  TempDir dir;
  const CliResult r =
      run_minrnn(dir, "bench env --quick --envs hopper --sizes 1,2 --markdown bench.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_text(dir.path / "bench.md").find("## Environments (minrnn bench env)"),
            std::string::npos);
  const auto csv = lines_of(read_text(dir.path / "runs" / "bench" / "env.csv"));
  ASSERT_EQ(csv.size(), 1u + 4u);  // header; single, vector N=1, vector N=2, mj_step
  EXPECT_EQ(csv[0], "machine,env,mode,num_envs,threads,steps,env_steps_per_s,mj_steps_per_s");
  for (size_t i = 1; i < csv.size(); ++i) {
    EXPECT_NE(csv[i].find(",hopper,"), std::string::npos) << csv[i];
    const std::string rate = csv[i].substr(0, csv[i].rfind(','));
    EXPECT_GT(std::stod(rate.substr(rate.rfind(',') + 1)), 0.0) << csv[i];
  }
}

// By default a bench prints and writes its CSV, and leaves the benchmark log alone: only --record
// (or naming a log with --markdown) appends to it.
TEST(Cli, BenchRecordsInTheLogOnlyWhenAsked) {
  TempDir dir;
  fs::create_directories(dir.path / "docs");
  CliResult r = run_minrnn(dir, "bench scan --quick --lengths 16");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.path / "runs" / "bench" / "scan-cpu.csv"));
  EXPECT_FALSE(fs::exists(dir.path / "docs" / "benchmarks.md"));

  r = run_minrnn(dir, "bench scan --quick --lengths 16 --record");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_text(dir.path / "docs" / "benchmarks.md").find("| scan: ours (linear_scan) |"),
            std::string::npos);

  r = run_minrnn(dir, "bench scan --quick --lengths 16 --record --no-append");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--no-append"), std::string::npos) << r.output;
}

// Where the log or the CSV cannot be written the bench says so before it measures anything, and
// the last result's CSV stays (it measured, replaced the CSV, then failed on the log).
TEST(Cli, BenchChecksWhereItFilesBeforeMeasuring) {
  TempDir dir;
  fs::create_directories(dir.path / "runs" / "bench");
  write_text(dir.path / "runs" / "bench" / "scan-cpu.csv", "the last result\n");
  write_text(dir.path / "evals.csv", "step,normalized\n1,2\n");
  write_text(dir.path / "config.yaml", "backbone: mingru\n");
  write_text(dir.path / "notes.md", "my notes\n");
  const std::string bench = "bench scan --quick --lengths 16";
  for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
           {"--record",
            "--markdown docs/benchmarks.md: cannot append to it: its folder docs "
            "does not exist"},
           {"--markdown ''", "--markdown: expected a file name, got ''"},
           {"--csv ''", "--csv: expected a file name, got ''"},
           {"--csv runs", "--csv runs: cannot write it: it is a folder"},
           // A file of another kind named by a slip: a run's curve, its config (a walk).
           {"--csv evals.csv",
            "--csv evals.csv: it holds something other than bench scan's CSV as this minrnn writes "
            "it (move an older one away) (its first line: "
            "'step,normalized"},
           {"--markdown config.yaml",
            "--markdown config.yaml: cannot append to it: a benchmark log is a Markdown file"},
           {"--markdown notes.md",
            "--markdown notes.md: cannot append to it: it holds something other than a Markdown "
            "log"}}) {
    const CliResult r = run_minrnn(dir, bench + " " + options);
    EXPECT_EQ(r.exit_code, 2) << options;  // a usage error, as eval's --out and compare's --csv
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("| scan: ours"), std::string::npos) << r.output;  // nothing measured
  }
  EXPECT_EQ(read_text(dir.path / "runs" / "bench" / "scan-cpu.csv"), "the last result\n");
  EXPECT_EQ(read_text(dir.path / "evals.csv"), "step,normalized\n1,2\n");
  EXPECT_EQ(read_text(dir.path / "config.yaml"), "backbone: mingru\n");
  EXPECT_EQ(read_text(dir.path / "notes.md"), "my notes\n");
}

// --csv replaces only this bench's own CSV: `bench policy --csv runs/bench/eval.csv` replaced the
// eval bench's rows, which sweep --estimate reads (a walk, 2026-11-30). Another bench's CSV is kept
// and named by its header, before anything is measured.
TEST(Cli, BenchCsvReplacesOnlyTheSameBenchsCsv) {
  TempDir dir;
  const std::string env = "bench env --quick --envs hopper --sizes 1 --steps 100 --csv e.csv";
  ASSERT_EQ(run_minrnn(dir, env).exit_code, 0);
  const CliResult again = run_minrnn(dir, env);  // its own CSV: replaced
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const std::string rows = read_text(dir.path / "e.csv");
  const CliResult scan = run_minrnn(dir, "bench scan --quick --lengths 16 --csv e.csv");
  EXPECT_EQ(scan.exit_code, 2) << scan.output;
  testing::expect_output_naming(scan,
                                {"--csv e.csv: it holds something other than bench scan's CSV as "
                                 "this minrnn writes it (move an older one away) (its first line: "
                                 "'machine,env,mode,num_envs"});
  EXPECT_EQ(scan.output.find("| scan: ours"), std::string::npos) << scan.output;
  EXPECT_EQ(read_text(dir.path / "e.csv"), rows);
}

// A --csv in a folder that is not there is refused, as eval's --out and compare's --csv: a typo
// made a tree (at / too). The default's folder, runs/bench/, is the tool's own and is made.
TEST(Cli, BenchCsvInAMissingFolderIsRefused) {
  TempDir dir;
  const CliResult r = run_minrnn(dir, "bench scan --quick --lengths 16 --csv newdir/sub/x.csv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  testing::expect_output_naming(
      r, {"--csv newdir/sub/x.csv: cannot write it: its folder newdir/sub does not exist"});
  EXPECT_FALSE(fs::exists(dir.path / "newdir"));
  ASSERT_EQ(run_minrnn(dir, "bench scan --quick --lengths 16").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path / "runs" / "bench" / "scan-cpu.csv"));
}

// A value out of an option's range is a usage error (exit 2) naming the option, as --packs 0.
TEST(Cli, BenchOptionValuesOutOfRangeAreUsageErrors) {
  TempDir dir;
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"bench train --devices tpu",
            "--devices: expected auto, cpu, cuda or cuda:N, got 'tpu'"},
           {"bench scan --device gpu", "--device: expected auto, cpu, cuda or cuda:N, got 'gpu'"},
           {"bench env --sizes 0", "--sizes: expected an integer from 1"},
           {"bench env --sizes 2,-1", "--sizes: expected an integer from 1"},
           {"bench scan --lengths 0", "--lengths: expected an integer from 1"},
           {"bench figure1 --lengths 16,0", "--lengths: expected an integer from 1"},
           // An unknown environment exited 1 (a walk, 2026-11-30), where every other value is 2.
           {"bench env --envs hopper,hoper", "unknown environment or D4RL dataset id 'hoper'"},
           {"bench eval --env walker", "unknown environment or D4RL dataset id 'walker'"},
           {"bench policy --env cheetah", "unknown environment or D4RL dataset id 'cheetah'"}}) {
    const CliResult r = run_minrnn(dir, args + " --no-append");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    testing::expect_output_naming(
        r, {said, "(minrnn " + args.substr(0, args.find(" --")) + " --help)"});
  }
  testing::expect_output_naming(run_minrnn(dir, "bench env --envs hoper --no-append"),
                                {"did you mean 'hopper'?"});
}

// What a bench cannot measure is refused before its first cell, by the option's name: a device
// (it measured the CPU cells first), a backbone with no stacked ops, a shape past the machine's
// memory (it grew until the memory ran out).
TEST(Cli, BenchRefusesWhatItCannotMeasureBeforeTheFirstCell) {
  TempDir dir;
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"bench train --backbones mingru --devices cpu,gpu --seconds 0.2",
            "--devices: expected auto, cpu, cuda or cuda:N, got 'gpu'"},
           {"bench pack --device cpu --stacked --backbones mingru,hgrn --packs 2",
            "--stacked: backbone hgrn has no stacked ops"},
           // Petabytes: past any machine's memory, so the refusal is what is tested.
           {"bench pack --device cpu --packs 1 --layers 100000 --embed 65536",
            "--layers 100000, --embed 65536, --batch 64, --context 20: 1 mingru run(s) need at "
            "least"}}) {
    const CliResult r = run_minrnn(dir, args + " --no-append");
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("bench train: round"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("bench pack: "), std::string::npos) << r.output;
  }
}

// --no-append prints only: no markdown, and no CSV unless --csv names one.
TEST(Cli, BenchNoAppendWritesOnlyWhatIsAskedFor) {
  TempDir dir;
  CliResult r = run_minrnn(dir, "bench scan --quick --lengths 16 --no-append");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| scan: ours (linear_scan) |"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(dir.path));

  fs::create_directories(dir.path / "out");  // a --csv's folder must be there
  r = run_minrnn(dir, "bench scan --quick --lengths 16 --no-append --csv out/scan.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto csv = lines_of(read_text(dir.path / "out" / "scan.csv"));
  ASSERT_EQ(csv.size(), 1u + 6u);  // header; two scans and four layers at one T
  EXPECT_EQ(csv[0],
            "device,machine,torch_threads,what,batch,T,dim,forward_ms,train_ms,forward_gb_per_s");
  EXPECT_NE(csv[1].find(",scan: ours (linear_scan),"), std::string::npos) << csv[1];
  EXPECT_FALSE(fs::exists(dir.path / "docs"));
}

// --peer with --rounds: the peer runs before, between and after our rounds, each round's ratio
// divides by the mean of the two peer runs around it, and the table adds the median and range.
// The peer here is a script printing 10, 20, 30 steps/s on its three calls (the real one is
// ../shared/peer/run.sh), so the ratios are known from our own rates.
TEST(Cli, BenchTrainRoundsAlternateWithThePeer) {
  TempDir dir;
  write_text(dir.path / "peer.sh",
             "#!/bin/sh\nn=$(cat calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > calls\n"
             "[ \"$1\" = train ] || exit 2\necho \"peer: = $((n * 10)).0 steps/s\"\n");
  fs::permissions(dir.path / "peer.sh", fs::perms::owner_all);
  fs::create_directories(dir.path / "out");
  const CliResult r = run_minrnn(dir,
                                 "bench train --backbones mingru --devices cpu --embed 16 "
                                 "--seconds 0.2 --peer ./peer.sh --rounds 2 --no-append "
                                 "--csv out/train.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(dir.path / "calls"), "3\n");
  EXPECT_NE(r.output.find("before, between and after our 2 rounds (steps/s): 10.00 20.00 30.00"),
            std::string::npos)
      << r.output;
  const auto csv = lines_of(read_text(dir.path / "out" / "train.csv"));
  ASSERT_EQ(csv.size(), 3u) << read_text(dir.path / "out" / "train.csv");
  EXPECT_EQ(csv[0].substr(0, 44), "round,device,machine,torch_threads,backbone,");
  std::vector<double> ratios;
  for (int round = 1; round <= 2; ++round) {
    const std::string& row = csv[round];
    EXPECT_EQ(row.substr(0, 6), std::to_string(round) + ",cpu,") << row;
    std::vector<std::string> cells;
    std::stringstream in(row);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    // Counted from the end (the machine's name may hold a quoted comma): the peer's mean rate
    // around the round, then the graph's launches (none: the CPU step is eager).
    EXPECT_EQ(cells[cells.size() - 2], round == 1 ? "15" : "25") << row;
    EXPECT_EQ(cells.back(), "0") << row;
    ratios.push_back(std::stod(cells[cells.size() - 9]) / (round == 1 ? 15.0 : 25.0));
  }
  // The summary row (the per-round rows start with their round).
  const std::string summary = "| mingru | cpu | ";
  const size_t at = r.output.find("\n" + summary);
  ASSERT_NE(at, std::string::npos) << r.output;
  std::istringstream cells(r.output.substr(at + 1 + summary.size()));
  double median = 0, lowest = 0, highest = 0;
  std::string bar;
  cells >> median >> bar >> lowest >> bar >> highest;
  EXPECT_NEAR(median, 0.5 * (ratios[0] + ratios[1]), 0.006) << r.output;
  EXPECT_NEAR(lowest, std::min(ratios[0], ratios[1]), 0.006) << r.output;
  EXPECT_NEAR(highest, std::max(ratios[0], ratios[1]), 0.006) << r.output;
}

// A peer that fails is named with how it ended and what it printed; no CSV is written.
TEST(CliBench, APeerThatFailsIsNamedWithItsOutput) {
  TempDir dir;
  write_text(dir.path / "peer.sh", "#!/bin/sh\necho 'no module named torch'\nexit 3\n");
  fs::permissions(dir.path / "peer.sh", fs::perms::owner_all);
  fs::create_directories(dir.path / "out");
  const CliResult r = run_minrnn(dir,
                                 "bench train --backbones mingru --devices cpu --embed 16 "
                                 "--seconds 0.2 --peer ./peer.sh --no-append --csv out/train.csv");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("'./peer.sh train 0.2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exited with status 3 without '= X steps/s':\nno module named torch"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir.path / "out" / "train.csv"));
}

// The peer's lines reach stderr as it prints them (review 52: a first run's minutes of pip install
// showed nothing until it ended): this peer waits, its first line printed, until the test has seen
// that line in minrnn's log; a peer passed on only at its end would wait its 20 s out and fail.
TEST(CliBench, APeersOutputIsPassedOnAsItComes) {
  TempDir dir;
  write_text(dir.path / "peer.sh",
             "#!/bin/sh\necho 'peer: installing'\nn=0\n"
             "while [ ! -e go ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done\n"
             "[ -e go ] || exit 5\necho 'peer: = 10.0 steps/s'\n");
  fs::permissions(dir.path / "peer.sh", fs::perms::owner_all);
  write_text(dir.path / "minrnn.log", "kept\n");  // written through, not over
  CliResult r;
  std::thread bench([&] {
    r = run_minrnn(dir,
                   "bench train --backbones mingru --devices cpu --embed 16 --seconds 0.2 "
                   "--peer ./peer.sh --no-append --csv train.csv >> minrnn.log");
  });
  const bool seen = testing::wait_for(
      [&] {
        return read_text(dir.path / "minrnn.log").find("peer: installing") != std::string::npos;
      },
      60);
  write_text(dir.path / "go", "");
  bench.join();
  EXPECT_TRUE(seen) << read_text(dir.path / "minrnn.log");
  EXPECT_EQ(r.exit_code, 0) << read_text(dir.path / "minrnn.log");
  const std::string log = read_text(dir.path / "minrnn.log");
  EXPECT_EQ(log.rfind("kept\npeer: installing\n", 0), 0u) << log;
  EXPECT_NE(log.find("peer: = 10.0 steps/s"), std::string::npos) << log;
}

// `bench pack --quick` is a smoke run as every other bench's: packs 1 and 2, a second a cell (a
// walk through the commands, 2026-11-29: it alone had no --quick). Each cell says the memory its
// pack held at most (a sweep's pack of 64 held 16.5 GiB of an H200, 2026-11-30): two runs, each
// with its own weights, AdamW moments and activations, hold more than one.
TEST(CliBench, PackHasAQuickSmokeRunThatSaysEachPacksMemory) {
  TempDir dir;
  const CliResult r = run_minrnn(dir,
                                 "bench pack --quick --device cpu --backbones mingru --embed 16 "
                                 "--layers 1 --batch 4 --context 5 --no-append --csv p.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("peak MiB"), std::string::npos) << r.output;
  const auto rows = lines_of(read_text(dir.path / "p.csv"));
  ASSERT_EQ(rows.size(), 3u) << read_text(dir.path / "p.csv");  // the header, P 1 and P 2
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
    return out;
  };
  const auto header = cells(rows[0]);
  const auto at = std::find(header.begin(), header.end(), "peak_mib");
  ASSERT_NE(at, header.end()) << rows[0];
  const size_t column = static_cast<size_t>(at - header.begin());
  const double one = std::stod(cells(rows[1]).at(column)),
               two = std::stod(cells(rows[2]).at(column));
  EXPECT_GT(one, 0) << rows[1];
  EXPECT_GT(two, one) << rows[1] << "\n" << rows[2];
}

}  // namespace
}  // namespace minrnn
