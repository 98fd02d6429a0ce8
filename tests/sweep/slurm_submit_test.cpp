// What `--backend slurm` refuses before submitting, and how it reads sbatch's answer, against
// stand-in sbatch/squeue programs (an audit of the Slurm backend, 2026-11-28): paths a #SBATCH
// line cannot carry, a lost or corrupt job.json while the job is queued, sbatch without
// --parsable output.
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
  auto s = spec_in(tmp.path);
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
        "\ncd -- '" + here.string() + "' || exit 2\n",
        "#SBATCH --comment=\"minrnn:" + out + "\"\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << " in\n" << script;

  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  write_exe(bin / "sbatch", "echo called > '" + (tmp.path / "sbatch.called").string() + "'\n");
  for (const std::string bad : {"nl\ntouch PWNED\n#", "q\"t", "b\\s"}) {
    s.out = (tmp.path / bad).string();
    try {
      testing::submit_quietly(s);
      FAIL() << "submitted with out " << s.out;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("out '"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("#SBATCH"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(s.out)) << s.out;
  }
  EXPECT_FALSE(fs::exists(tmp.path / "sbatch.called"));
}

// A stand-in squeue: for `--jobs=` (the recorded job) `recorded`, else (every queued job, with its
// comment) `all`.
void write_squeue(const fs::path& bin, const std::string& recorded, const std::string& all) {
  write_exe(bin / "squeue", "case \"$*\" in *--jobs=*) printf '" + recorded + "' ;; *) printf '" +
                                all + "' ;; esac\n");
}

// job.json lost or corrupt (an empty job_id too) while the sweep's job is queued: found by the
// tag it was submitted with (its --comment) and refused, naming it; moving the file away is
// advised only where squeue lists no such job.
TEST(SweepSlurmSubmit, ALostOrCorruptJobJsonNeverSubmitsTwice) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  const std::string tag = "minrnn:" + fs::absolute(s.out).string();
  write_exe(bin / "sbatch", "echo 4242\n");
  EXPECT_EQ(testing::submit_quietly(s), 0);
  EXPECT_EQ(nlohmann::json::parse(read_text(tmp.path / "out/slurm/job.json"))["tag"], tag);
  EXPECT_NE(read_text(tmp.path / "out/slurm/sweep.sbatch").find("--comment=\"" + tag + "\""),
            std::string::npos);
  write_exe(bin / "sbatch", "echo called > '" + (tmp.path / "sbatch.called").string() + "'\n");
  write_squeue(bin, "", "4242|" + tag + "\\n4242|" + tag + "\\n99|minrnn:/elsewhere\\n");
  const fs::path job = tmp.path / "out/slurm/job.json";
  for (const char* content : {"", "{\"job_id\": \"\"}", "{oops"}) {
    if (*content)
      std::ofstream(job) << content;
    else
      fs::remove(job);
    try {
      testing::submit_quietly(s);
      FAIL() << "submitted again beside job 4242, job.json '" << content << "'";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("4242"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("submit anew"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(tmp.path / "sbatch.called"));
  write_squeue(bin, "", "99|minrnn:/elsewhere\\n");
  try {
    testing::submit_quietly(s);
    FAIL() << "submitted with a corrupt job.json";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("job.json: unreadable"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("move the file away to submit anew"), std::string::npos)
        << e.what();
  }
}

// sbatch exiting 0 with "Submitted batch job 11" (a site's wrapper without --parsable) has
// submitted job 11; an answer without an id never reads "Nothing was submitted".
TEST(SweepSlurmSubmit, SbatchWithoutParsableOutputIsStillASubmission) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  write_exe(bin / "sbatch", "echo 'Submitted batch job 11'\n");
  EXPECT_EQ(testing::submit_quietly(s), 0);
  EXPECT_EQ(nlohmann::json::parse(read_text(tmp.path / "out/slurm/job.json"))["job_id"], "11");
  fs::remove(tmp.path / "out/slurm/job.json");
  write_exe(bin / "sbatch", "echo 'queued, see the portal'\n");
  try {
    testing::submit_quietly(s);
    FAIL() << "an answer without a job id";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("may have been submitted"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("Nothing was submitted"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minrnn
