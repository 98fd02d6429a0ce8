// The fuzz targets and the driver that runs them (scripts/fuzz.sh runs them; docs/faults.md,
// "Fuzzing", says what they check and where findings go).
//
// A target reads one input the way minrnn reads a file a user hands it: a D4RL .hdf5, a Minari
// dataset, a YAML config, a sweep file, a checkpoint. The contract it checks: every input either
// loads or is refused with an exception whose message names the file; nothing else is allowed —
// no crash or other signal, no hang, no exception without the file's name, no allocation larger
// than the driver's limit (see fuzz_main.cpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace minrnn::fuzz {

struct Target {
  std::string name;
  std::string what;                     // one line for --list
  bool text = false;                    // mutate as text too (dictionary words, lines)
  std::vector<std::string> dictionary;  // words a mutation may insert (keys, YAML syntax)
  // Valid inputs to start from, made by the project's own writers (or read from configs/) into
  // `work_dir`. Called once.
  std::function<std::vector<std::string>(const std::string& work_dir)> seeds;
  // Loads `input` (written to a file under `work_dir` first where the reader takes a path).
  // Returns normally when it loads; throws when it is refused. `must_name` receives the text a
  // refusal's message has to contain (the file's path).
  std::function<void(const std::string& input, const std::string& work_dir, std::string* must_name)>
      run;
};

const std::vector<Target>& targets();

}  // namespace minrnn::fuzz
