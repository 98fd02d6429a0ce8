// What every bench's filed entry says beside its numbers (tools/bench/report.h): the environment
// variables that changed what it measured, under its heading — set, each named with its value;
// unset, the entry as measured.
#include "tools/bench/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace minrnn::cli {
namespace {

// Clears every variable with_environment reads for the test's span, and puts back what was set.
class CleanEnvironment {
 public:
  CleanEnvironment() {
    for (const char* name : kBehaviourVariables) {
      const char* value = std::getenv(name);
      saved_[name] = value ? std::string(value) : std::string("\x01");
      unsetenv(name);
    }
  }
  ~CleanEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value != "\x01") setenv(name.c_str(), value.c_str(), 1);
    }
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST(BenchReport, AnEntryNamesTheEnvironmentThatChangedItsRun) {
  const CleanEnvironment clean;
  const std::string entry = "### 2026-11-28 03:00 — a CPU\n\nCommand: `minrnn bench train`.\n";
  EXPECT_EQ(with_environment(entry), entry);
  setenv("MINRNN_SCAN_KERNEL", "tiled32", 1);
  setenv("MINRNN_SIDE_WORK", "1", 1);
  EXPECT_EQ(with_environment(entry),
            "### 2026-11-28 03:00 — a CPU\n\nSet in the environment: `MINRNN_SCAN_KERNEL=tiled32`, "
            "`MINRNN_SIDE_WORK=1`.\n\nCommand: `minrnn bench train`.\n");
  EXPECT_EQ(with_environment("no heading\n\nbody"), "no heading\n\nbody");  // not an entry
}

}  // namespace
}  // namespace minrnn::cli
