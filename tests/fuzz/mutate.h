// The mutations the fuzz driver (fuzz_main.cpp) makes of an input: bit flips, interesting integers
// written over 1/2/4/8 bytes, nudged integers, deleted, duplicated and truncated ranges, splices of
// two inputs, and for text targets dictionary words and copied lines. Deterministic for a seed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz.h"

namespace minrnn::fuzz {

// splitmix64: small, fast, and the same sequence everywhere for a given seed.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

// One mutation of `s`, drawn from `rng`; `corpus` gives splices their other input. Inputs are kept
// under 8 MiB.
void mutate_once(std::string& s, Rng& rng, const std::vector<std::string>& corpus, const Target& t);

}  // namespace minrnn::fuzz
