// minrnn_fuzz: a self-contained mutation fuzzer for minrnn's file readers (targets.cpp).
//
//   minrnn_fuzz TARGET [--runs N] [--seconds S] [--seed X] [--corpus DIR] [--findings DIR]
//   minrnn_fuzz TARGET FILE...          replay inputs (regressions) and check each
//   minrnn_fuzz --list
//
// Each run: the regression inputs of tests/fuzz/regressions/TARGET are replayed first, then the
// seeds (valid files made by minrnn's own writers) and --corpus files are mutated — bit flips,
// interesting integers (sizes, -1, 2^31...) written over 1/2/4/8 bytes, inserted, deleted and
// duplicated ranges, splices of two inputs, dictionary words for text targets — for N inputs or
// S seconds, whichever ends first. Deterministic for a given --seed.
//
// A finding is any input that breaks the readers' contract; it is saved under --findings
// (default fuzz-findings/TARGET) and printed, and the exit status is 1:
//   - a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT — an ASan/UBSan report aborts too);
//   - a hang: one input taking longer than --timeout seconds (SIGALRM);
//   - an allocation of more than --max-alloc-mb at once (operator new here; under ASan, run with
//     ASAN_OPTIONS=max_allocation_size_mb=N:allocator_may_return_null=0, as scripts/fuzz.sh does,
//     which covers malloc as well);
//   - a refusal whose message does not name the file, or an exception not derived from
//     std::exception.
// libFuzzer needs clang's coverage instrumentation of all the code it drives, LibTorch and HDF5
// included, which the project's GCC build does not have; this driver needs nothing extra and runs
// in the normal and the sanitizer builds alike.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <c10/util/Exception.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "io/atomic_dir.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/mutate.h"
#include "tests/paths.h"
#include "tests/text_file.h"

namespace {

namespace fs = std::filesystem;
using minrnn::fuzz::mutate_once;
using minrnn::fuzz::Rng;
using minrnn::fuzz::Target;

// --- what the crash handlers need: the input being run, and where to save it -----------------

const char* g_input = nullptr;
size_t g_input_size = 0;
char g_crash_path[4096] = "";
size_t g_max_alloc = size_t{1} << 30;

void write_err(const char* text) {
  if (::write(2, text, std::strlen(text)) < 0) {
  }
}

// Async-signal-safe: open/write/close only.
void save_current_input(const char* why) {
  if (g_input == nullptr) return;
  write_err("\n*** minrnn_fuzz: ");
  write_err(why);
  write_err("; the input is saved as ");
  write_err(g_crash_path);
  write_err("\n");
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < g_input_size) {
    const ssize_t n = ::write(fd, g_input + done, g_input_size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

pid_t g_main_pid = 0;  // a reader's own child process (datasets/read_isolated.h) is not ours

void on_signal(int sig) {
  if (::getpid() != g_main_pid) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  save_current_input(sig == SIGALRM ? "hang (the input ran past --timeout)" : strsignal(sig));
  g_input = nullptr;
  ::signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  ::raise(sig == SIGALRM ? SIGABRT : sig);
}

void on_sanitizer_death() {
  if (::getpid() != g_main_pid) return;
  save_current_input("sanitizer report");
  g_input = nullptr;
}

}  // namespace

extern "C" void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

// An allocation over the limit is a finding (a size read from a file used unchecked). Not under
// ASan: it has its own operator new; max_allocation_size_mb does this job there.
#ifndef __SANITIZE_ADDRESS__
void* operator new(size_t size) {
  if (size > g_max_alloc && g_input != nullptr && ::getpid() == g_main_pid) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "an allocation of %zu bytes (over --max-alloc-mb)", size);
    save_current_input(buf);
    g_input = nullptr;
    std::abort();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  return operator new(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
#endif

namespace {

using minrnn::testing::read_text;

struct Stats {
  long runs = 0, loaded = 0, refused = 0, findings = 0;
};

// Runs one input; false when it is a finding (saved under `findings`).
bool run_one(const Target& t, const std::string& input, const std::string& work,
             const fs::path& findings, long index, unsigned timeout_s, Stats& stats,
             bool quiet_refusals = true) {
  const std::string crash = (findings / ("crash-" + std::to_string(index))).string();
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s", crash.c_str());
  g_input = input.data();
  g_input_size = input.size();
  std::string must_name, problem;
  ::alarm(timeout_s);
  try {
    t.run(input, work, &must_name);
    ++stats.loaded;
  } catch (const c10::Error& e) {
    problem = e.what_without_backtrace();
  } catch (const std::exception& e) {
    problem = e.what();
  } catch (...) {
    problem = "\x01an exception not derived from std::exception";
  }
  ::alarm(0);
  g_input = nullptr;
  ++stats.runs;
  if (problem.empty()) return true;
  const bool clear =
      problem[0] != '\x01' && !must_name.empty() && problem.find(must_name) != std::string::npos;
  if (clear) {
    ++stats.refused;
    if (!quiet_refusals) std::printf("  refused, as it should be: %s\n", problem.c_str());
    return true;
  }
  ++stats.findings;
  const std::string saved = (findings / ("unclear-error-" + std::to_string(index))).string();
  std::ofstream(saved, std::ios::binary) << input;
  std::fprintf(stderr,
               "*** minrnn_fuzz %s: an error that does not name the file (%s): %s\n"
               "    the input is saved as %s\n",
               t.name.c_str(), must_name.c_str(), problem.c_str() + (problem[0] == '\x01'),
               saved.c_str());
  return false;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: minrnn_fuzz TARGET [--runs N] [--seconds S] [--seed X] [--timeout S] "
               "[--max-alloc-mb M] [--corpus DIR] [--regressions DIR] [--findings DIR] "
               "[--work DIR]\n       minrnn_fuzz TARGET FILE...\n       minrnn_fuzz --list\n",
               why);
  return 2;
}

// What the command line asks (usage() says it in full).
struct FuzzOptions {
  const Target* target = nullptr;
  long runs = 2000;
  double seconds = 1e9;
  uint64_t seed = 1;
  unsigned timeout_s = 20;
  std::string corpus_dir, findings_dir, work_dir, regressions_dir;
  std::vector<std::string> replay;
};

// The options after the target; exits with usage() on a bad one.
FuzzOptions parse_options(const Target& target, const std::vector<std::string>& args) {
  FuzzOptions o;
  o.target = &target;
  o.findings_dir = "fuzz-findings/" + target.name;
  o.regressions_dir = minrnn::testing::source_dir() + "/tests/fuzz/regressions/" + target.name;
  for (size_t i = 1; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) std::exit(usage((args[i] + " needs a value").c_str()));
      return args[++i];
    };
    const std::string& a = args[i];
    if (a == "--runs")
      o.runs = std::stol(value());
    else if (a == "--seconds")
      o.seconds = std::stod(value());
    else if (a == "--seed")
      o.seed = std::stoull(value());
    else if (a == "--timeout")
      o.timeout_s = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--max-alloc-mb")
      g_max_alloc = std::stoull(value()) << 20;
    else if (a == "--corpus")
      o.corpus_dir = value();
    else if (a == "--regressions")
      o.regressions_dir = value();
    else if (a == "--findings")
      o.findings_dir = value();
    else if (a == "--work")
      o.work_dir = value();
    else if (a.rfind("--", 0) == 0)
      std::exit(usage(("unknown option " + a).c_str()));
    else
      o.replay.push_back(a);
  }
  if (o.work_dir.empty()) {
    o.work_dir = (fs::temp_directory_path() /
                  ("minrnn_fuzz_" + target.name + "_" + std::to_string(::getpid())))
                     .string();
  }
  return o;
}

void install_crash_handlers() {
  g_main_pid = ::getpid();
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) {
    // Under a sanitizer its own handlers report memory errors; the death callback saves the input.
    if (__sanitizer_set_death_callback != nullptr && sig != SIGALRM && sig != SIGABRT) continue;
    ::signal(sig, on_signal);
  }
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(on_sanitizer_death);
}

// One input through the target, numbered in order.
struct Runner {
  const FuzzOptions& o;
  Stats& stats;
  long index = 0;
  bool run(const std::string& input, bool quiet = true) {
    return run_one(*o.target, input, o.work_dir, o.findings_dir, index++, o.timeout_s, stats,
                   quiet);
  }
};

// The given files, saying what each did.
bool replay_files(const FuzzOptions& o, Runner& runner) {
  bool ok = true;
  for (const auto& file : o.replay) {
    std::printf("%s: %s\n", o.target->name.c_str(), file.c_str());
    const long before = runner.stats.loaded;
    ok &= runner.run(read_text(file), false);
    if (runner.stats.loaded > before) std::printf("  loaded\n");
  }
  return ok;
}

// The regressions (inputs that once broke a reader must keep being handled), the seeds, then
// mutations of them all and of the corpus until the runs or the seconds are spent.
bool fuzz(const FuzzOptions& o, Runner& runner) {
  bool ok = true;
  std::vector<std::string> corpus;
  long regressions = 0;
  if (fs::is_directory(o.regressions_dir)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(o.regressions_dir))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      corpus.push_back(read_text(f));
      ok &= runner.run(corpus.back());
      ++regressions;
    }
  }
  const auto seeds = o.target->seeds(o.work_dir);
  corpus.insert(corpus.end(), seeds.begin(), seeds.end());
  if (!o.corpus_dir.empty() && fs::is_directory(o.corpus_dir)) {
    for (const auto& e : fs::directory_iterator(o.corpus_dir))
      if (e.is_regular_file()) corpus.push_back(read_text(e.path()));
  }
  Stats& stats = runner.stats;
  const long loaded_before_seeds = stats.loaded;
  for (const auto& s : seeds) ok &= runner.run(s);
  const long seeds_loaded = stats.loaded - loaded_before_seeds;
  Rng rng{o.seed * 0x2545F4914F6CDD1DULL + 1};
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (long i = 0; i < o.runs && elapsed() <= o.seconds; ++i) {
    std::string input = corpus[rng.below(corpus.size())];
    const size_t mutations = 1 + rng.below(rng.below(2) ? 3 : 12);
    for (size_t m = 0; m < mutations; ++m) mutate_once(input, rng, corpus, *o.target);
    ok &= runner.run(input);
  }
  std::printf(
      "minrnn_fuzz %s: %ld inputs (%ld regressions, %zu seeds of which %ld load) in "
      "%.1f s: %ld loaded, %ld refused with a clear error, %ld findings\n",
      o.target->name.c_str(), stats.runs, regressions, seeds.size(), seeds_loaded, elapsed(),
      stats.loaded, stats.refused, stats.findings);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no target");
  if (args[0] == "--list") {
    for (const auto& t : minrnn::fuzz::targets())
      std::printf("%-16s %s\n", t.name.c_str(), t.what.c_str());
    return 0;
  }
  const Target* target = nullptr;
  for (const auto& t : minrnn::fuzz::targets())
    if (t.name == args[0]) target = &t;
  if (!target) return usage(("unknown target '" + args[0] + "' (see --list)").c_str());
  const FuzzOptions o = parse_options(*target, args);
  install_crash_handlers();
  fs::create_directories(o.work_dir);
  fs::create_directories(o.findings_dir);
  Stats stats;
  Runner runner{o, stats};
  const bool ok = o.replay.empty() ? fuzz(o, runner) : replay_files(o, runner);
  std::error_code ec;
  minrnn::io::remove_tree(o.work_dir);
  if (fs::is_empty(o.findings_dir, ec)) fs::remove(o.findings_dir, ec);
  return ok ? 0 : 1;
}
