// What every `minrnn` subcommand shares (tools/commands.h): the option check and the stub.
#include <exception>
#include <string>

#include "tools/commands.h"

namespace minrnn::cli {

void not_built_yet(CLI::App& sub, const char* issue) {
  sub.allow_extras();
  sub.callback([&sub, issue] {
    throw ExitError{
        2, "minrnn " + sub.get_name() + ": not built yet (tracked in issue " + issue + ")"};
  });
}

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

}  // namespace minrnn::cli
