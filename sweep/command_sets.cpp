#include "sweep/command_sets.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/input_file.h"
#include "rl/config.h"

namespace minrnn::sweep {

namespace fs = std::filesystem;

std::vector<std::string> with_overrides(std::vector<std::string> base,
                                        const std::vector<std::string>& over) {
  for (const std::string& set : over) {
    base.erase(std::remove_if(base.begin(), base.end(),
                              [&](const std::string& s) {
                                return rl::override_key(s) == rl::override_key(set);
                              }),
               base.end());
  }
  base.insert(base.end(), over.begin(), over.end());
  return base;
}

void apply_command_sets(SweepSpec& spec, const std::vector<std::string>& sets) {
  spec.file_sets = spec.sets;
  spec.sets = with_overrides(std::move(spec.sets), sets);
  spec.command_sets = sets;
}

std::optional<RecordedSets> recorded_command_sets(const std::string& out) {
  const fs::path file = fs::path(out) / kCommandSetsFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const std::string text = io::read_input_file(file.string(), "sweep's record of its --set");
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto is_set = [](const nlohmann::json& s) {
    return s.is_string() && s.get<std::string>().find('=') != std::string::npos;
  };
  if (!j.is_object() || !j.contains("sets") || !j["sets"].is_array() ||
      !std::all_of(j["sets"].begin(), j["sets"].end(), is_set) ||
      (j.contains("sweep_file") && !j["sweep_file"].is_string()) ||
      (j.contains("file_sets") &&
       (!j["file_sets"].is_array() ||
        !std::all_of(j["file_sets"].begin(), j["file_sets"].end(), is_set)))) {
    throw std::invalid_argument(
        file.string() +
        ": not a sweep's record of its --set options (expected "
        "{\"sweep_file\": \"...\", \"sets\": [\"key=value\", ...]}); delete "
        "it, and give the sweep's --set options");
  }
  RecordedSets recorded{j["sets"].get<std::vector<std::string>>(),
                        j.value("sweep_file", std::string()), std::nullopt};
  if (j.contains("file_sets")) recorded.file_sets = j["file_sets"].get<std::vector<std::string>>();
  return recorded;
}

void record_command_sets(const SweepSpec& spec) {
  const nlohmann::json j = {
      {"sweep_file", spec.file}, {"sets", spec.command_sets}, {"file_sets", spec.file_sets}};
  io::write_file_atomically((fs::path(spec.out) / kCommandSetsFile).string(), j.dump(2) + "\n");
}

std::vector<std::string> changed_under_kept_sets(const RecordedSets& recorded,
                                                 const std::vector<std::string>& kept,
                                                 const std::vector<std::string>& file_sets_now) {
  std::vector<std::string> changed;
  if (!recorded.file_sets) return changed;
  for (const std::string& set : kept) {
    const std::string key = rl::override_key(set);
    const std::string now = rl::override_of(file_sets_now, key),
                      then = rl::override_of(*recorded.file_sets, key);
    // Unchanged, or now what the kept option says anyway: nothing to choose between.
    if (now.empty() || now == then || now == set) continue;
    changed.push_back("the file's set " + now + " (" + (then.empty() ? "none" : then) +
                      " when started) under --set " + set);
  }
  return changed;
}

}  // namespace minrnn::sweep
