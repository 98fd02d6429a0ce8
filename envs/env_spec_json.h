// A Gymnasium EnvSpec as JSON (what a Minari dataset's metadata holds), read strictly into one
// of our locomotion tasks: every field and constructor option known, checked and kept or refused
// by name. Internal to envs/ (registry.h's resolve_env and resolve_env_spec take it).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "envs/registry.h"

namespace minrnn::envs {

// `field` names the document in errors ("eval_env_spec.kwargs.xml_file = ...").
ResolvedEnv resolve_spec_json(const nlohmann::json& spec, const std::string& field);

}  // namespace minrnn::envs
