#include "io/name_list.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace minrnn::io {
namespace {

// Optimal string alignment distance, case folded: a swap of neighbours counts one, as a typo
// makes it.
size_t typo_distance(const std::string& a, const std::string& b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string comma_separated(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string names_phrase(const std::vector<std::string>& names, size_t at_most) {
  const size_t named = names.size() > at_most + 1 ? at_most : names.size();
  std::string text;
  for (size_t i = 0; i < named; ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  if (named < names.size()) text += " and " + std::to_string(names.size() - named) + " more";
  return text;
}

std::string closest_name(const std::string& given, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 0;
  bool tied = false;
  for (const std::string& name : known) {
    const size_t allowed = std::max<size_t>(1, std::max(given.size(), name.size()) / 3);
    // Lengths further apart than that are further apart in edits too: a long input (a key of a
    // damaged file) is never compared cell by cell.
    const size_t length_gap =
        given.size() > name.size() ? given.size() - name.size() : name.size() - given.size();
    if (name == given || length_gap > allowed) continue;
    const size_t distance = typo_distance(given, name);
    if (distance > allowed) continue;
    if (best == nullptr || distance < best_distance) {
      best = &name, best_distance = distance, tied = false;
    } else if (distance == best_distance && name != *best) {
      tied = true;
    }
  }
  return best == nullptr || tied ? "" : *best;
}

std::string did_you_mean_text(const std::string& meant) {
  return meant.empty() ? "" : " (did you mean '" + meant + "'?)";
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& known) {
  return did_you_mean_text(closest_name(given, known));
}

std::string known_names_hint(const std::string& given, const std::vector<std::string>& known) {
  return did_you_mean(given, known) + " (known: " + comma_separated(known) + ")";
}

}  // namespace minrnn::io
