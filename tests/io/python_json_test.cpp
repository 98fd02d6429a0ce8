// Python's json: Infinity, -Infinity and NaN tokens in, the same out; strings left alone.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include "io/python_json.h"
#include "tests/temp_dir.h"

namespace minrnn::io {
namespace {

TEST(PythonJson, ReadsAndWritesTheNonStandardTokens) {
  const auto j = parse_python_json(
      R"({"low": [-Infinity, 0.5], "high": Infinity, "x": NaN, "s": "Infinity and -Infinity"})",
      "t");
  EXPECT_EQ(json_number(j["low"][0], "low"), -INFINITY);
  EXPECT_EQ(json_number(j["low"][1], "low"), 0.5);
  EXPECT_EQ(json_number(j["high"], "high"), INFINITY);
  EXPECT_TRUE(std::isnan(json_number(j["x"], "x")));
  EXPECT_TRUE(is_json_number(j["high"]));
  EXPECT_FALSE(is_json_number(j["s"]));
  // A string that merely says "Infinity" stays a string (the quoted token is the marker).
  EXPECT_EQ(j["s"], "Infinity and -Infinity");
  EXPECT_THROW(json_number(j["s"], "s"), std::invalid_argument);
  EXPECT_EQ(dump_python_json(j["low"]), "[-Infinity, 0.5]");
  EXPECT_EQ(dump_python_json(nlohmann::json{{"a", 1.0}, {"b", true}, {"c", nullptr}}),
            R"({"a": 1.0, "b": true, "c": null})");
  EXPECT_EQ(parse_python_json(dump_python_json(j), "back"), j);
  try {
    parse_python_json("{\"a\": ", "metadata.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("metadata.json: not valid JSON"), std::string::npos);
  }
}

// Metadata nested thousands deep would overflow the stack of the code that writes it back (an
// error message, dump_python_json): refused where it is read, naming the document.
TEST(PythonJson, ADocumentNestedTooDeepIsRefused) {
  const auto nested = [](int depth) {
    return "{\"a\": " + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  EXPECT_EQ(dump_python_json(parse_python_json(nested(kMaxJsonDepth), "m")).size(),
            nested(kMaxJsonDepth).size());
  try {
    parse_python_json(nested(20000), "metadata.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "metadata.json: arrays or objects nested more than " +
                                         std::to_string(kMaxJsonDepth) + " deep (at byte " +
                                         std::to_string(6 + kMaxJsonDepth - 1) + ")");
  }
  // Brackets inside strings are text, not nesting.
  EXPECT_NO_THROW(parse_python_json("[\"" + std::string(500, '[') + "\"]", "m"));
}

// A JSON file that must be whole: cut short, or a FIFO (whose read would block), is an error that
// names the file, where a bare ifstream waited or said only "parse error".
TEST(PythonJson, AFileThatIsNoWholeJsonIsNamed) {
  minrnn::testing::TempDir tmp;
  const std::string cut = (tmp.path / "job.json").string();
  std::ofstream(cut) << "{\"job_id\": \"7";
  const auto error = [](const std::string& path) {
    try {
      read_json(path, "job.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(cut).rfind(cut + ": not valid JSON (", 0), 0u) << error(cut);
  const std::string fifo = (tmp.path / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error(fifo), fifo + ": not a regular file (a job.json is read from one)");
  std::ofstream(cut, std::ios::trunc) << "{\"job_id\": \"7\"}";
  EXPECT_EQ(read_json(cut, "job.json")["job_id"], "7");
}

}  // namespace
}  // namespace minrnn::io
