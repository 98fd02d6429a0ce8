#include "io/python_json.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "io/input_file.h"

namespace minrnn::io {
namespace {

// Copies `text`, quoting the bare tokens Infinity, -Infinity and NaN found outside strings, and
// refuses a document nested deeper than kMaxJsonDepth.
std::string quote_special_tokens(const std::string& text, const std::string& what) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    depth += c == '[' || c == '{';
    depth -= c == ']' || c == '}';
    if (depth > kMaxJsonDepth) {
      throw std::invalid_argument(what + ": arrays or objects nested more than " +
                                  std::to_string(kMaxJsonDepth) + " deep (at byte " +
                                  std::to_string(i) + ")");
    }
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      const std::string t = token;
      if (text.compare(i, t.size(), t) == 0) {
        out += "\"" + t + "\"";
        i += t.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace

nlohmann::json parse_python_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(quote_special_tokens(text, what));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(what + ": not valid JSON (" + e.what() + ")");
  }
}

bool is_json_number(const nlohmann::json& value) {
  if (value.is_number()) return true;
  if (!value.is_string()) return false;
  const auto& s = value.get_ref<const std::string&>();
  return s == "Infinity" || s == "-Infinity" || s == "NaN";
}

double json_number(const nlohmann::json& value, const std::string& what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw std::invalid_argument(what + " = " + value.dump() + ": expected a number");
}

std::string dump_python_json(const nlohmann::json& value) {
  std::ostringstream out;
  if (value.is_object()) {
    out << "{";
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out << (first ? "" : ", ") << nlohmann::json(key).dump() << ": " << dump_python_json(item);
      first = false;
    }
    out << "}";
  } else if (value.is_array()) {
    out << "[";
    for (size_t i = 0; i < value.size(); ++i) out << (i ? ", " : "") << dump_python_json(value[i]);
    out << "]";
  } else if (is_json_number(value) && value.is_string()) {
    out << value.get<std::string>();
  } else if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::isinf(x)) {
      out << (x > 0 ? "Infinity" : "-Infinity");
    } else if (std::isnan(x)) {
      out << "NaN";
    } else {
      // Python's repr of a float always has a '.' or an exponent: 1.0, not 1.
      std::string s = value.dump();
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      out << s;
    }
  } else {
    out << value.dump();
  }
  return out.str();
}

nlohmann::json read_json_or_null(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
  try {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

nlohmann::json read_json(const std::string& path, const std::string& what) {
  const std::string text = read_input_file(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace minrnn::io
