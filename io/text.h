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
// `text` shown on one line in a message or a comment: a newline as \n, another control character
// as \xNN (a path or a file's first line that would otherwise break the line or move the cursor).
std::string visible(const std::string& text);
// Whether `text` begins with `prefix`.
bool starts_with(const std::string& text, const std::string& prefix);
// The local time now in strftime's `format` ("%Y-%m-%d %H:%M"), from any thread (localtime_r).
std::string local_time_text(const char* format);

}  // namespace minrnn::io
