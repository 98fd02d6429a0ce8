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
      (j.contains("sweep_file") && !j["sweep_file"].is_string())) {
    throw std::invalid_argument(
        file.string() +
        ": not a sweep's record of its --set options (expected "
        "{\"sweep_file\": \"...\", \"sets\": [\"key=value\", ...]}); delete "
        "it, and give the sweep's --set options");
  }
  return RecordedSets{j["sets"].get<std::vector<std::string>>(),
                      j.value("sweep_file", std::string())};
}

void record_command_sets(const SweepSpec& spec) {
  const nlohmann::json j = {{"sweep_file", spec.file}, {"sets", spec.command_sets}};
  io::write_file_atomically((fs::path(spec.out) / kCommandSetsFile).string(), j.dump(2) + "\n");
}

}  // namespace minrnn::sweep
