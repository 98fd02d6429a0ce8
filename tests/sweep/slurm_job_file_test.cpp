// <out>/slurm/job.json as --status and a resubmission read it (sweep/slurm_job_file.cpp): cut
// short, or a FIFO in its place, it is an error naming the file, never a wait.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "sweep/slurm_files.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::string& out) {
  try {
    sweep::read_recorded_job(out);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SlurmJobFile, AJobFileCutShortOrAFifoIsNamed) {
  testing::TempDir tmp;
  const std::string out = (tmp.path / "out").string();
  const std::string job = out + "/slurm/job.json";
  fs::create_directories(out + "/slurm");
  std::ofstream(job) << "{\"job_id\": \"12";
  EXPECT_EQ(error_of(out).rfind(job + ": unreadable (" + job + ": not valid JSON", 0), 0u)
      << error_of(out);
  fs::remove(job);
  ASSERT_EQ(::mkfifo(job.c_str(), 0600), 0);
  EXPECT_EQ(error_of(out).rfind(job + ": unreadable (" + job + ": not a regular file", 0), 0u)
      << error_of(out);
  fs::remove(job);
  std::ofstream(job) << "{\"job_id\": \"12\", \"tasks\": []}";
  EXPECT_EQ(sweep::read_recorded_job(out).id, "12");
}

}  // namespace
}  // namespace minrnn
