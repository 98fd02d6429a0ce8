// What every `minrnn` subcommand shares (tools/commands.h): its options' checks.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "datasets/env_table.h"
#include "envs/registry.h"
#include "io/name_list.h"
#include "io/shell_word.h"
#include "io/text.h"
#include "ops/device.h"
#include "rl/config.h"
#include "rl/decision_model.h"
#include "rl/run_start.h"
#include "tools/commands.h"

namespace minrnn::cli {

namespace {

// `value` read whole as a number ("12x", "" and "1,5" are none); NaN where it is none.
double whole_double(const std::string& value) {
  try {
    size_t used = 0;
    const double x = std::stod(value, &used);
    if (used == value.size()) return x;
  } catch (const std::exception&) {
  }
  return std::nan("");
}

}  // namespace

CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const double x = whole_double(value);
        if (x > 0 && std::isfinite(x)) return "";
        return "expected a finite number > 0, got '" + value + "'";
      },
      "> 0", "positive");
}

CLI::Validator positive_count() {
  return whole_number(1, std::numeric_limits<int32_t>::max());
}

CLI::Validator finite_float() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (std::isfinite(static_cast<float>(whole_double(value)))) return "";
        return "expected a finite number within float's range (±3.4e38), got '" + value + "'";
      },
      "NUMBER", "finite float");
}

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  const std::string range = hi == std::numeric_limits<int64_t>::max()
                                ? ">= " + std::to_string(lo)
                                : "from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& value) -> std::string {
        int64_t n = 0;
        const char* end = value.data() + value.size();
        const auto [stop, error] = std::from_chars(value.data(), end, n);
        if (error == std::errc() && stop == end && n >= lo && n <= hi) {
          value = std::to_string(n);  // CLI11 converts in base 0: "010" would be 8
          return "";
        }
        return "expected an integer " + range + ", got '" + value + "'";
      },
      range, "whole number");
}

CLI::Validator path_name(const std::string& what) {
  return CLI::Validator(
      [what](std::string& path) { return path.empty() ? "expected " + what + ", got ''" : ""; }, "",
      what);
}

namespace {

// "" where find_env knows `env`, else require_env's refusal (with the name it most likely meant).
std::string why_unknown_env(const std::string& env) {
  try {
    (void)data::require_env(env);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CLI::Validator env_family() {
  return CLI::Validator(
      [](std::string& env) {
        if (const std::string why = why_unknown_env(env); !why.empty()) return why;
        return env == data::find_env(env)->name
                   ? std::string()
                   : "expected hopper, halfcheetah or walker2d (no version), got '" + env + "'";
      },
      "ENV", "environment");
}

CLI::Validator env_to_check() {
  return CLI::Validator(
      [](std::string& env) { return env == "none" ? std::string() : why_unknown_env(env); }, "ENV",
      "environment");
}

CLI::Validator env_name() {
  return CLI::Validator(
      [](std::string& env) {
        try {
          (void)envs::resolve_env(env);
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      "ENV", "environment");
}

CLI::Validator device_name() {
  return CLI::Validator([](std::string& value) { return core::why_no_device_name(value); },
                        "DEVICE", "device");
}

CLI::Validator backbone_name() {
  return CLI::Validator([](std::string& value) { return rl::unknown_backbone(value); }, "BACKBONE",
                        "backbone");
}

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

}  // namespace

void check_transitions_fit(const std::string& option, int64_t steps, int obs_dim, int act_dim,
                           int nq, int nv) {
  const double numbers = 2.0 * obs_dim + act_dim + nq + nv + 2;  // + reward, log-prob
  const double bytes = 2.0 * static_cast<double>(steps) * (4.0 * numbers + 2.0);
  if (const std::string shortfall = rl::memory_shortfall(bytes); !shortfall.empty())
    throw std::invalid_argument(option + ": " + std::to_string(steps) +
                                " transitions to write need " + shortfall);
}

void check_command_line_sets(const std::string& command, const std::vector<std::string>& sets,
                             const std::function<std::string(const std::string&)>& why_not) {
  for (const std::string& set : sets) {
    if (const std::string why = why_not(set); !why.empty())
      throw usage_error(command, "--set " + set + ": " + why);
  }
  if (const rl::RepeatedOverride twice = rl::repeated_override(sets); !twice.key.empty()) {
    throw usage_error(command, "--set " + twice.key + ": given twice ('" + twice.first + "', '" +
                                   twice.second + "'); give it once");
  }
}

void one_value_per_option(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    one_value_per_option(*sub);
    const auto options = sub->get_options();
    const bool positionals = std::any_of(options.begin(), options.end(),
                                         [](const CLI::Option* o) { return o->get_positional(); });
    if (!positionals) continue;
    for (CLI::Option* o : options) {
      if (!o->get_positional()) o->allow_extra_args(false);
    }
  }
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error) {
  // The deepest command the words named: its name in the message, its --help as the pointer.
  const CLI::App* at = &app;
  std::string command = "minrnn";
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) {
    at = subs.front();
    command += " " + at->get_name();
  }
  std::string message = (at == &app ? "" : command.substr(7) + ": ") + error.what();
  std::vector<std::string> names;
  for (const CLI::Option* o : at->get_options()) {
    for (const std::string& name : o->get_lnames()) names.push_back("--" + name);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // A misspelt option is said alone, once: CLI11's list of what was left over held its value
    // too, before it ("3 --episode; --episode (did you mean ...)": walk 47).
    std::string misspelt;
    for (const std::string& word : at->remaining()) {
      const std::string option = word.substr(0, word.find('='));
      const std::string meant = io::starts_with(word, "--") ? io::closest_name(option, names) : "";
      if (!meant.empty())
        misspelt += (misspelt.empty() ? "" : "; ") + option + " is no option" +
                    io::did_you_mean_text(meant);
    }
    if (!misspelt.empty()) message = (at == &app ? "" : command.substr(7) + ": ") + misspelt;
  }
  // `--set --out d`: --set took the option as its value, and its value is what was left over.
  for (const CLI::Option* o : at->get_options()) {
    for (const std::string& value : o->results()) {
      if (std::find(names.begin(), names.end(), value.substr(0, value.find('='))) != names.end())
        message += "; " + o->get_name() + " took the option " + value + " as its value";
    }
  }
  return message + " (" + command + " --help)";
}

ExitError usage_error(const std::string& command, const std::string& message) {
  return {2, "minrnn: error: " + command + ": " + message + " (minrnn " + command + " --help)"};
}

std::string unknown_subcommand(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* at = &app;
  std::string command = "minrnn";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";
    const std::vector<std::string> names = subcommand_names(*at);
    if (names.empty()) return "";  // a subcommand's own arguments
    const auto named =
        at->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    if (named.empty()) {
      if (at->get_require_subcommand_min() == 0) return "";
      return "unknown command '" + command + " " + word + "'" + io::known_names_hint(word, names);
    }
    at = named.front();
    command += " " + word;
  }
  if (at->get_require_subcommand_min() == 0) return "";
  return "'" + command + "' needs a command: " + io::comma_separated(subcommand_names(*at)) +
         " (`" + command + " --help` says what each does)";
}

namespace {
std::string& kept_command_line() {
  static std::string line = "minrnn";
  return line;
}
}  // namespace

void keep_command_line(int argc, const char* const* argv) {
  std::string line = "minrnn";
  for (int i = 1; i < argc; ++i) line += " " + io::shell_word(argv[i]);
  kept_command_line() = line;
}

const std::string& command_line_as_typed() {
  return kept_command_line();
}

}  // namespace minrnn::cli
