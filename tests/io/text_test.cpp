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

// A text on one line however it was written: the Slurm script's header and a file's first line in
// a refusal said it two ways (\xNN and '?').
TEST(Text, VisibleKeepsATextOnOneLine) {
  EXPECT_EQ(visible("runs/a b"), "runs/a b");
  EXPECT_EQ(visible("a\nb\tc\x7f"), "a\\nb\\x09c\\x7f");
  EXPECT_EQ(visible("h\xc3\xa9"), "h\xc3\xa9");  // UTF-8 is text, not control
}

TEST(Text, StartsWith) {
  EXPECT_TRUE(starts_with("cuda:1", "cuda"));
  EXPECT_TRUE(starts_with("x", ""));
  EXPECT_FALSE(starts_with("cud", "cuda"));
  EXPECT_FALSE(starts_with("a-cuda", "cuda"));
}

// The local time in a format: from any thread (localtime_r, where std::localtime shares a buffer).
TEST(Text, LocalTimeTextIsNowInTheFormat) {
  const std::string now = local_time_text("%Y-%m-%d %H:%M:%S");
  ASSERT_EQ(now.size(), 19u) << now;
  EXPECT_EQ(now[4], '-');
  EXPECT_EQ(now[13], ':');
  EXPECT_EQ(local_time_text("%%"), "%");
}

}  // namespace
}  // namespace minrnn::io
