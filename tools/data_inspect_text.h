// `minrnn data inspect`'s text: the JSON describe() makes (tools/cmd_data.cpp), as lines a person
// reads — where the data comes from, its episodes, its values.
#pragma once
#include <nlohmann/json.hpp>

namespace minrnn::cli {

void print_inspect_text(const nlohmann::json& j);

}  // namespace minrnn::cli
