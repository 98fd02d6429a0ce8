// CPU loops built for the machine they run on: a function marked MINRNN_VECTOR_CLONES is compiled
// for AVX-512, AVX2 and the baseline ISA, and the loader picks one (GCC's target_clones, an ifunc),
// so one binary vectorizes 16, 8 or 4 floats wide. Helpers it calls must be inlined into it to get
// the clone's ISA: mark them MINRNN_INLINE (plain `inline` ones usually are, not always).
// The AVX2 clone is x86-64-v3 (AVX2 with FMA), not bare "avx2": that target has no FMA, so every
// polynomial (exp, erf) ran as separate multiplies and adds — 25–35% slower on a Zen 3 (GELU, its
// backward, the scan). AVX-512's clone already had FMA; every AVX2 CPU made has it too.
#pragma once

#define MINRNN_INLINE inline __attribute__((always_inline))
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MINRNN_VECTOR_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define MINRNN_VECTOR_CLONES
#endif
