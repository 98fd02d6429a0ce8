// What `--backend slurm` refuses before submitting, and how it reads sbatch's answer, against
// stand-in sbatch/squeue programs (an audit of the Slurm backend, 2026-11-28): paths a #SBATCH
// line cannot carry.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tests/sweep/slurm_fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::PathOnly;
using testing::read_text;
using testing::spec_in;
using testing::write_exe;

// The lines of the script sbatch reads #SBATCH options from: up to its first command.
std::vector<std::string> header_of(const std::string& script) {
  std::vector<std::string> lines;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line) && line.rfind("set -u", 0) != 0;)
    lines.push_back(line);
  return lines;
}

// A space, a quote or a '%' in `out` or the submitting directory is quoted (and '%' doubled in the
// log's name, which sbatch expands); a sweep file named with a newline leaves every header line a
// comment; a newline, '"' or '\' in `out` is refused naming it, before anything is written.
TEST(SweepSlurmScript, PathsAreQuotedOrRefusedNamingOut) {
  testing::TempDir tmp;
  sweep::SweepSpec s = spec_in(tmp.path);
  s.file = (tmp.path / "a\ntouch PWNED\n#.yaml").string();
  s.out = (tmp.path / "o u't%x").string();
  const fs::path cwd = fs::current_path(), here = tmp.path / "w d";
  fs::create_directories(here);
  fs::current_path(here);
  const auto runs = sweep::plan_sweep(s);
  const std::string script = sweep::slurm_batch_script(s, runs, {{0}}, "/opt/minrnn");
  fs::current_path(cwd);
  for (const std::string& line : header_of(script)) EXPECT_EQ(line.rfind('#', 0), 0u) << line;
  const std::string out = fs::absolute(s.out).string();
  for (const std::string& line :
       {"#SBATCH --output=\"" + (tmp.path / "o u't%%x").string() + "/slurm/logs/%A_%a.out\"\n",
        "#SBATCH --chdir=\"" + here.string() + "\"\n",
        "#SBATCH --comment=\"minrnn:" + out + "\"\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << " in\n" << script;

  const fs::path bin = tmp.path / "bin";
  fs::create_directories(bin);
  const PathOnly path(bin);
  write_exe(bin / "sbatch", "echo called > '" + (tmp.path / "sbatch.called").string() + "'\n");
  for (const std::string bad : {"nl\ntouch PWNED\n#", "q\"t", "b\\s"}) {
    s.out = (tmp.path / bad).string();
    try {
      sweep::submit_slurm_sweep(s, {});
      FAIL() << "submitted with out " << s.out;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("out '"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("#SBATCH"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(s.out)) << s.out;
  }
  EXPECT_FALSE(fs::exists(tmp.path / "sbatch.called"));
}

}  // namespace
}  // namespace minrnn
