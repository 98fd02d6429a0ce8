// How many CPUs this process may run on: the cores its affinity mask allows (taskset, a container's
// cpuset, Slurm's --cpus-per-task binding), not the machine's count. std::thread's
// hardware_concurrency() counts the machine: under a mask of 2 cores on a 64-core node it would
// start 64 threads that take turns on two.
#pragma once

namespace minrnn::io {

// At least 1; the machine's hardware threads where the mask cannot be read.
int usable_cpu_count();

}  // namespace minrnn::io
