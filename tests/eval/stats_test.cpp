// The t test `minrnn compare` judges by (eval/stats.h), against closed forms and printed tables.
#include "eval/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace minrnn::eval {
namespace {

TEST(Stats, TwoSidedTPValuesAreTheClosedFormsAndTheTables) {
  const double pi = std::acos(-1.0);
  // One degree of freedom is the Cauchy distribution: p = 1 − (2/π) atan|t|.
  for (double t : {0.5, 1.0, 3.0, 40.0})
    EXPECT_NEAR(two_sided_t_p_value(t, 1), 1 - 2 / pi * std::atan(t), 1e-12) << t;
  // Two: p = 1 − |t| / √(2 + t²).
  for (double t : {0.3, 2.0, 5.196152, -7.0})
    EXPECT_NEAR(two_sided_t_p_value(t, 2), 1 - std::abs(t) / std::sqrt(2 + t * t), 1e-12) << t;
  // The tables' 97.5 % and 99.5 % quantiles (two-sided 5 % and 1 %).
  EXPECT_NEAR(two_sided_t_p_value(2.776445, 4), 0.05, 1e-6);
  EXPECT_NEAR(two_sided_t_p_value(2.228139, 10), 0.05, 1e-6);
  EXPECT_NEAR(two_sided_t_p_value(2.042272, 30), 0.05, 1e-6);
  EXPECT_NEAR(two_sided_t_p_value(4.604095, 4), 0.01, 1e-6);
  EXPECT_NEAR(two_sided_t_p_value(1.959964, 1e7), 0.05, 1e-6);  // the normal's, far out
  EXPECT_DOUBLE_EQ(two_sided_t_p_value(0, 3), 1);
  EXPECT_EQ(two_sided_t_p_value(std::numeric_limits<double>::infinity(), 3), 0);
  EXPECT_TRUE(std::isnan(two_sided_t_p_value(NAN, 3)));
  EXPECT_TRUE(std::isnan(two_sided_t_p_value(1, 0)));
}

}  // namespace
}  // namespace minrnn::eval
