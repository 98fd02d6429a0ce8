// A number as a CSV cell (io/csv.h): one format for the comparison CSV and every bench's, where
// compare and the benches each had their own (one wrote "inf", the other an empty cell).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/csv.h"

namespace minrnn::io {
namespace {

TEST(CsvNumber, SixSignificantDigitsAndEmptyWhereNotFinite) {
  EXPECT_EQ(csv_number(1.0), "1");
  EXPECT_EQ(csv_number(-0.1234567), "-0.123457");
  EXPECT_EQ(csv_number(1234567.0), "1.23457e+06");
  EXPECT_EQ(csv_number(2.5e-7), "2.5e-07");
  EXPECT_EQ(csv_number(NAN), "");
  EXPECT_EQ(csv_number(std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(csv_number(-std::numeric_limits<double>::infinity()), "");
}

}  // namespace
}  // namespace minrnn::io
