#include "io/progress_line.h"
#include "io/progress_pace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace minrnn::io {
namespace {

// What `write` put on a ProgressLine writing to a temporary file, as a terminal or as a log.
template <typename Write>
std::string written(bool terminal, Write write) {
  std::FILE* out = std::tmpfile();
  {
    ProgressLine line(out, terminal);
    write(line);
  }
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  return text;
}

void a_job(ProgressLine& line) {
  line.update("step 1/2");
  line.message("eval @ step 1: 5.0");
  line.update("step 2/2");
  line.close();
  line.close();  // a second close ends nothing more
}

// A log (train.log, a Slurm job's output) reads line by line: no carriage return, no blank line
// before a message.
TEST(ProgressLine, ALogGetsALineAnUpdate) {
  EXPECT_EQ(written(false, a_job), "step 1/2\neval @ step 1: 5.0\nstep 2/2\n");
}

// A terminal rewrites its line in place; a message takes a line of its own below it, and the
// line is ended once.
TEST(ProgressLine, ATerminalRewritesItsLineAndAMessageGoesBelowIt) {
  EXPECT_EQ(written(true, a_job), "\rstep 1/2\033[K\neval @ step 1: 5.0\n\rstep 2/2\033[K\n");
  EXPECT_EQ(written(true, [](ProgressLine& line) { line.message("alone"); }), "alone\n");
}

// What each of a pack's runs would say alike is said once; another text is said.
TEST(ProgressLine, AMessageOnceIsSaidOnce) {
  EXPECT_EQ(written(false,
                    [](ProgressLine& line) {
                      line.message_once("device: cpu");
                      line.message_once("device: cpu");
                      line.message_once("env hopper");
                    }),
            "device: cpu\nenv hopper\n");
}

// A loop that looks at its progress every N steps shows it once a period (and at its end): a log
// of collect's 400 000 steps read 400 lines, one every 1000.
TEST(ProgressPace, ALineOnceAPeriodAndAtTheEnd) {
  ProgressLine line(stderr, false);
  line.set_period(std::chrono::milliseconds(200));
  ProgressPace pace(line);
  EXPECT_FALSE(pace.due(false));
  EXPECT_TRUE(pace.due(true));
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_TRUE(pace.due(false));
  EXPECT_FALSE(pace.due(false));

  ProgressPace first(line, true);  // a job that shows it has begun
  EXPECT_TRUE(first.due(false));
  EXPECT_FALSE(first.due(false));
}

// Every progress line's ETA: the units left at the rate, 0 once done, and "?" (negative) while no
// rate is known (a download's first second, a run not yet past its first row).
TEST(ProgressLine, AnEtaIsTheUnitsLeftAtTheRate) {
  EXPECT_DOUBLE_EQ(eta_seconds(100, 400, 50), 6);
  EXPECT_EQ(eta_seconds(400, 400, 50), 0);
  EXPECT_EQ(eta_seconds(500, 400, 0), 0);  // past the end, even without a rate
  EXPECT_LT(eta_seconds(100, 400, 0), 0);
  EXPECT_LT(eta_seconds(100, 400, -3), 0);
  EXPECT_EQ(duration_text(eta_seconds(100, 400, 0)), "?");
  EXPECT_EQ(duration_text(eta_seconds(0, 3600 * 2 + 300, 1)), "2h05m");
}

}  // namespace
}  // namespace minrnn::io
