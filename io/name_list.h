// Names in an error message: a list of them, and the "did you mean" of a message naming something
// unknown (the known name a typo most likely meant, offered before the full list).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace minrnn::io {

// "a, b, c".
std::string comma_separated(const std::vector<std::string>& names);
// "a", "a and b", "a, b and c"; past one more than `at_most`, "a, b, c and 51 more" (a report's
// tables and its many plots, the envs a dataset's widths fit).
std::string names_phrase(const std::vector<std::string>& names, size_t at_most = 3);

// The name among `known` closest to `given` — fewest single-character insertions, deletions,
// substitutions or swaps of neighbours, at most a third of the longer name's length (at least
// one), a difference of case alone the closest — or "" where none is that close or two are equally
// close.
std::string closest_name(const std::string& given, const std::vector<std::string>& known);

// " (did you mean 'x'?)" for `meant` x, "" for none: every offer is worded so.
std::string did_you_mean_text(const std::string& meant);
// did_you_mean_text of closest_name's x.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& known);

// The tail of a message refusing `given`: did_you_mean's offer, then " (known: a, b, c)".
std::string known_names_hint(const std::string& given, const std::vector<std::string>& known);

}  // namespace minrnn::io
