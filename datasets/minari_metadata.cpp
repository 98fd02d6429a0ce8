// A Minari dataset's metadata.json (datasets/minari_metadata.h).
#include "datasets/minari_metadata.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "io/input_file.h"
#include "io/python_json.h"

namespace minrnn::data {
namespace {

namespace fs = std::filesystem;

std::string shorten(const std::string& text, size_t max = 160) {
  return text.size() <= max ? text : text.substr(0, max) + "...";
}

// A field that Minari stores as a JSON document inside a string (env_spec, spaces); some
// conversions store the object itself. Returns the document's text, "" when absent or null.
std::string document_text(const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string spec_id(const std::string& spec_text, const std::string& where) {
  if (spec_text.empty()) return "";
  const nlohmann::json spec = io::parse_python_json(spec_text, where);
  if (!spec.is_object() || !spec.contains("id") || !spec["id"].is_string()) {
    throw std::invalid_argument(where + " = " + shorten(spec_text) +
                                ": expected a Gymnasium EnvSpec with an \"id\"");
  }
  return spec["id"].get<std::string>();
}

MinariSpace parse_space(const nlohmann::json& j, const std::string& key, const std::string& where) {
  MinariSpace space;
  space.text = document_text(j, key);
  if (space.text.empty()) return space;
  space.present = true;
  const std::string what = where + ": " + key;
  const nlohmann::json doc = io::parse_python_json(space.text, what);
  if (!doc.is_object() || !doc.contains("type") || !doc["type"].is_string()) {
    throw std::invalid_argument(what + " = " + shorten(space.text) +
                                ": expected a serialized Gymnasium space with a \"type\"");
  }
  space.type = doc["type"].get<std::string>();
  if (space.type != "Box") {
    throw std::invalid_argument(
        what + " = " + shorten(space.text) + ": a " + space.type +
        " space; minrnn reads Box observation and action spaces only" +
        (space.type == "Dict" ? " (flatten the Dict into one Box first)" : ""));
  }
  if (doc.contains("dtype") && doc["dtype"].is_string()) space.dtype = doc["dtype"];
  if (!doc.contains("shape") || !doc["shape"].is_array()) {
    throw std::invalid_argument(what + " = " + shorten(space.text) + ": a Box without a shape");
  }
  for (const auto& d : doc["shape"]) {
    if (!d.is_number_integer()) {
      throw std::invalid_argument(what + ".shape = " + doc["shape"].dump() + ": expected integers");
    }
    space.shape.push_back(d.get<int64_t>());
  }
  for (const char* bound : {"low", "high"}) {
    if (!doc.contains(bound)) continue;
    std::vector<double>& out = std::string(bound) == "low" ? space.low : space.high;
    // A nested list (row-major, as numpy's tolist) or one scalar for every entry.
    std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& v) {
      if (v.is_array()) {
        for (const auto& x : v) walk(x);
      } else {
        out.push_back(io::json_number(v, what + "." + bound));
      }
    };
    walk(doc[bound]);
  }
  return space;
}

}  // namespace

MinariInfo read_minari_metadata(const fs::path& dir) {
  MinariInfo info;
  info.dataset_id = dir.filename().string();
  // Minari keeps metadata.json beside main_data.hdf5 (<dir>/data/); older tools put it in <dir>.
  fs::path path = dir / "data" / "metadata.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) path = dir / "metadata.json";
  if (!fs::exists(path, ec)) {
    // Without it the data names no environment, version or time limit: Hopper-v5 data would be
    // scored in D4RL's Hopper by its file name alone. Python's minari refuses it too.
    throw std::invalid_argument(
        (dir / "data" / "metadata.json").string() +
        ": missing (a Minari dataset records its environment, spaces and sizes there; without it "
        "the environment to evaluate in is unknown)");
  }
  info.metadata_path = path.string();
  const nlohmann::json j = io::parse_python_json(
      io::read_input_file(path.string(), "Minari metadata.json"), path.string());
  if (!j.is_object()) throw std::invalid_argument(path.string() + ": expected a JSON object");
  if (j.contains("dataset_id") && j["dataset_id"].is_string()) info.dataset_id = j["dataset_id"];
  if (j.contains("minari_version") && j["minari_version"].is_string())
    info.minari_version = j["minari_version"];
  info.collected_by_minrnn = j.contains("description") && j["description"].is_string() &&
                             j["description"].get<std::string>().rfind(kCollectedByMinrnn, 0) == 0;
  info.env_spec = document_text(j, "env_spec");
  info.eval_env_spec = document_text(j, "eval_env_spec");
  info.env_id = spec_id(info.env_spec, path.string() + ": env_spec");
  info.eval_env_id = spec_id(info.eval_env_spec, path.string() + ": eval_env_spec");
  const std::string& spec_text = info.eval_env_spec.empty() ? info.env_spec : info.eval_env_spec;
  if (!spec_text.empty()) {
    const nlohmann::json spec = io::parse_python_json(spec_text, path.string());
    if (spec.contains("max_episode_steps") && spec["max_episode_steps"].is_number_integer())
      info.max_episode_steps = spec["max_episode_steps"].get<int>();
    if (spec.contains("kwargs") && spec["kwargs"].is_object()) {
      const auto& exclude =
          spec["kwargs"].value("exclude_current_positions_from_observation", nlohmann::json(true));
      info.observes_x = exclude.is_boolean() && !exclude.get<bool>();
    }
  }
  for (const auto& [key, declared] : {std::pair{"total_episodes", &info.declared_episodes},
                                      std::pair{"total_steps", &info.declared_steps}}) {
    if (j.contains(key) && !j[key].is_null()) {
      if (!j[key].is_number_integer() || j[key].get<int64_t>() < 0) {
        throw std::invalid_argument(path.string() + ": " + key + " = " + j[key].dump() +
                                    ": expected a count");
      }
      *declared = j[key].get<int64_t>();
    }
  }
  info.observation_space = parse_space(j, "observation_space", path.string());
  info.action_space = parse_space(j, "action_space", path.string());
  const bool has_min = j.contains("ref_min_score") && !j["ref_min_score"].is_null();
  const bool has_max = j.contains("ref_max_score") && !j["ref_max_score"].is_null();
  if (has_min != has_max) {
    throw std::invalid_argument(
        path.string() + ": " +
        (has_min ? "ref_min_score without ref_max_score" : "ref_max_score without ref_min_score"));
  }
  if (has_min) {
    info.ref_min_score = io::json_number(j["ref_min_score"], path.string() + ": ref_min_score");
    info.ref_max_score = io::json_number(j["ref_max_score"], path.string() + ": ref_max_score");
    if (!std::isfinite(info.ref_min_score) || !std::isfinite(info.ref_max_score) ||
        !(info.ref_max_score > info.ref_min_score)) {
      throw std::invalid_argument(path.string() + ": ref_min_score = " + j["ref_min_score"].dump() +
                                  ", ref_max_score = " + j["ref_max_score"].dump() +
                                  ": expected finite numbers with ref_max_score > ref_min_score");
    }
    info.has_ref_scores = true;
  }
  return info;
}

}  // namespace minrnn::data
