// The per-environment random generator. std::mt19937_64's output sequence is fixed by the
// standard, but std::uniform_real_distribution / std::normal_distribution are not: we do our own
// transforms so a seed gives the same episode with libstdc++, libc++ and MSVC.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>

namespace minrnn::envs {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : engine_(seed) {}
  void seed(uint64_t seed) { engine_.seed(seed); }

  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform01(); }
  // Standard normal by Box-Muller; one draw per call (the second value is dropped) so the stream
  // position depends only on the number of calls.
  double normal() {
    const double u1 = 1.0 - uniform01();  // (0, 1]: log is finite
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace minrnn::envs
