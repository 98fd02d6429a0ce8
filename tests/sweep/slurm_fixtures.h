// Shared by the Slurm backend's tests without a cluster: stand-in Slurm commands on a PATH of
// their own, and a sweep of four runs over the tiny config.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sweep/sweep.h"
#include "tests/scoped_env.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/text_file.h"

namespace minrnn::testing {

inline const std::string kRuns = "datasets: [d]\nbackbones: [mingru, minlstm]\nseeds: [0, 1]\n";

// An executable shell script at `path` (a stand-in sbatch, squeue, sacct or minrnn).
inline void write_exe(const std::filesystem::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// PATH = `dir` (made here if missing) only, for the scope: the stand-in Slurm commands in it are
// the only ones.
struct PathOnly : ScopedEnv {
  explicit PathOnly(const std::filesystem::path& dir) : ScopedEnv("PATH", made(dir)) {}
  static std::string made(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    return dir.string();
  }
};

// The scope's stdout captured and dropped, released however the scope ends (a capture left open
// by a throw aborts the next test's; gtest's own failures go to stdout, so keep the scope short).
struct QuietStdout {
  QuietStdout() { ::testing::internal::CaptureStdout(); }
  ~QuietStdout() { ::testing::internal::GetCapturedStdout(); }
};

// submit_slurm_sweep without its progress lines.
inline int submit_quietly(const sweep::SweepSpec& s) {
  const QuietStdout quiet;
  return sweep::submit_slurm_sweep(s, {});
}

// The four runs of kRuns (plus `slurm`, a `slurm:` line) over the tiny config, into <dir>/out.
inline TinySweep spec_in(const std::filesystem::path& dir, const std::string& slurm = "") {
  sweep::SweepSpec s = sweep::parse_sweep(kRuns + slurm, (dir / "s.yaml").string());
  s.config_template = kTinyConfig;
  s.sets = {"max_steps=5"};
  s.out = (dir / "out").string();
  return TinySweep(std::move(s), dir);
}

}  // namespace minrnn::testing
