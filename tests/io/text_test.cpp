// The small text helpers (io/text.h).
#include "io/text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace minrnn::io {
namespace {

TEST(Text, LowercaseAndTrimmed) {
  EXPECT_EQ(lowercase("Hopper-V5"), "hopper-v5");
  EXPECT_EQ(trimmed(" \t gpu 1 \n"), "gpu 1");
  EXPECT_EQ(trimmed("   "), "");
}

// Where all of the text is one number; strtod alone reads "3.0x" as 3 and "" as 0.
TEST(Text, NumberInTakesOnlyTextThatIsWhollyANumber) {
  EXPECT_EQ(number_in("3"), 3.0);
  EXPECT_EQ(number_in("-1e5"), -1e5);
  EXPECT_TRUE(std::isnan(number_in("nan").value()));
  EXPECT_FALSE(number_in(""));
  EXPECT_FALSE(number_in("abc"));
  EXPECT_FALSE(number_in("3.0x"));
  EXPECT_FALSE(number_in("3 "));
}

}  // namespace
}  // namespace minrnn::io
