// Small text helpers every layer reads names and answers with.
#pragma once
#include <string>

namespace minrnn::io {

// `s` in ASCII lower case ("Hopper-v5" -> "hopper-v5": names are matched case-blind).
std::string lowercase(std::string s);
// `s` without the white space at either end (an HTTP header's value, a field of squeue's output).
std::string trimmed(const std::string& s);

}  // namespace minrnn::io
