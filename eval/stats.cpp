#include "eval/stats.h"

#include <cmath>

namespace minrnn::eval {
namespace {

// The continued fraction of the incomplete beta function (modified Lentz), which converges fast
// for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, epsilon = 1e-15;
  auto guarded = [](double v) { return std::abs(v) < tiny ? tiny : v; };
  double c = 1, d = 1 / guarded(1 - (a + b) * x / (a + 1)), h = d;
  for (int m = 1; m <= 500; ++m) {
    const double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 / guarded(1 + even * d);
    c = guarded(1 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 / guarded(1 + odd * d);
    c = guarded(1 + odd / c);
    h *= d * c;
    if (std::abs(d * c - 1) < epsilon) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  return x < (a + 1) / (a + b + 2) ? front * beta_continued_fraction(a, b, x) / a
                                   : 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

}  // namespace

double two_sided_t_p_value(double t, double degrees) {
  if (std::isnan(t) || !(degrees > 0)) return NAN;
  if (std::isinf(t)) return 0;
  // P(|T| ≥ |t|) = I_{ν/(ν+t²)}(ν/2, 1/2).
  return regularized_incomplete_beta(degrees / 2, 0.5, degrees / (degrees + t * t));
}

}  // namespace minrnn::eval
