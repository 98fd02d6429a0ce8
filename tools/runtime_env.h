// Runtime settings that libgomp and glibc's malloc read when they load, before main: the CLI sets
// the ones the user has not set and starts itself again once (tools/main.cpp).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace minrnn::cli {

// How OpenMP's idle threads wait between parallel regions: one variable to set, or none when the
// user chose already (OMP_WAIT_POLICY or GOMP_SPINCOUNT set, even to ""). `threads`: the OpenMP
// threads this process will run (OMP_NUM_THREADS, else `cpus`); `others_running`: threads of
// other processes running now.
//
// Where our threads fit beside the others, idle threads spin a while (libgomp's own default
// count) before sleeping: a training step runs ~175 parallel regions, and waking a sleeping thread
// for each costs tens of microseconds on a VM (an IPI and a halted vCPU) — 8–14% of a minLSTM step
// on the 2-core machine (docs/benchmarks.md). Where they do not fit, spinning steals the time of
// the thread it waits for (a tiny model ran 2.6× slower beside a sweep), so they sleep at once.
std::optional<std::pair<std::string, std::string>> openmp_wait_setting(const char* user_policy,
                                                                       const char* user_spincount,
                                                                       int cpus, int threads,
                                                                       int others_running);

// Every setting this process should start with, given the environment and the machine now.
std::vector<std::pair<std::string, std::string>> runtime_settings();

}  // namespace minrnn::cli
