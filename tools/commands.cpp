// What every `minrnn` subcommand shares (tools/commands.h): its options' checks.
#include <exception>
#include <string>
#include <vector>

#include "rl/decision_model.h"
#include "tools/commands.h"

namespace minrnn::cli {

CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          size_t used = 0;
          if (std::stod(value, &used) > 0 && used == value.size()) return "";
        } catch (const std::exception&) {
        }
        return "expected a number > 0, got '" + value + "'";
      },
      "> 0", "positive");
}

CLI::Validator backbone_name() {
  return CLI::Validator([](std::string& value) { return rl::unknown_backbone(value); }, "BACKBONE",
                        "backbone");
}

}  // namespace minrnn::cli
