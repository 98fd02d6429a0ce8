// What every `minrnn` subcommand shares (tools/commands.h): its options' checks.
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "io/name_list.h"
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
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::vector<std::string>& known = rl::backbone_names();
        if (std::count(known.begin(), known.end(), value) == 1) return "";
        return "unknown backbone '" + value + "'" + io::did_you_mean(value, known) +
               " (known: " + io::comma_separated(known) + ")";
      },
      "BACKBONE", "backbone");
}

}  // namespace minrnn::cli
