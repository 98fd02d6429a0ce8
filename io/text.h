// Small text helpers every layer reads names and answers with.
#pragma once
#include <optional>
#include <string>

namespace minrnn::io {

// `s` in ASCII lower case ("Hopper-v5" -> "hopper-v5": names are matched case-blind).
std::string lowercase(std::string s);
// `s` without the white space at either end (an HTTP header's value, a field of squeue's output).
std::string trimmed(const std::string& s);
// The number `text` spells to its last character, in strtod's syntax ("3", "-1e5", "nan", "inf",
// hex; leading blanks skipped); nullopt for "", "abc", "3.0x" or "3 ", which strtod alone reads as
// 0 or 3.
std::optional<double> number_in(const std::string& text);

}  // namespace minrnn::io
