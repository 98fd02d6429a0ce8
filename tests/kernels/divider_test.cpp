// Divider (kernels/math/divider.h): a multiply-high, an add and a shift give n / d exactly over
// the whole range it claims, against the hardware's division.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/math/divider.h"

namespace minrnn::core {
namespace {

TEST(Divider, QuotientsEqualDivisionOverTheirRange) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> divisors = {1, 2, 3, 5, 7, 48, 60, 64, 128, 384, 512, 3840, 65535, 65537};
  divisors.push_back(Divider::kLimit - 1);
  for (int i = 0; i < 64; ++i) divisors.push_back(1 + static_cast<int64_t>(rng() % 1000000));
  for (int i = 0; i < 16; ++i)
    divisors.push_back(1 + static_cast<int64_t>(rng() % (Divider::kLimit - 1)));
  for (const int64_t d : divisors) {
    const Divider by = Divider::of(d);
    std::vector<int64_t> numerators = {0, 1, d - 1, d, d + 1, 2 * d - 1, Divider::kLimit - 1};
    for (int i = 0; i < 2000; ++i)
      numerators.push_back(static_cast<int64_t>(rng() % Divider::kLimit));
    for (const int64_t n : numerators) {
      if (n < 0 || n >= Divider::kLimit) continue;
      ASSERT_EQ(int64_t{by.quotient(static_cast<uint32_t>(n))}, n / d) << n << " / " << d;
    }
  }
}

TEST(Divider, FitsOnlyWhereItIsExact) {
  EXPECT_TRUE(Divider::fits(Divider::kLimit, 3));
  EXPECT_FALSE(Divider::fits(Divider::kLimit + 1, 3));
  EXPECT_FALSE(Divider::fits(10, 0));
  EXPECT_FALSE(Divider::fits(10, Divider::kLimit));
}

}  // namespace
}  // namespace minrnn::core
