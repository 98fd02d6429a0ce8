#include "ops/tuned_choice_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "io/atomic_file.h"
#include "io/env_switch.h"
#include "io/input_file.h"

namespace minrnn::core {
namespace {

// The file's lines as key → choice; a line without a tab, or with an empty side, is skipped with
// a warning (a file cut short, or edited by hand).
std::map<std::string, std::string> parse_choices(const std::string& text, const std::string& path) {
  std::map<std::string, std::string> choices;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size()) {
      std::fprintf(stderr,
                   "tuned products: %s line %d is not 'key<TAB>choice': skipped (its shape is "
                   "timed again)\n",
                   path.c_str(), number);
      continue;
    }
    choices.emplace(line.substr(0, tab), line.substr(tab + 1));
  }
  return choices;
}

// The file's text, "" where it does not exist, or cannot be read as a text file (said: its shapes
// are timed again). MINRNN_TUNED_GEMM_FILE may name any path: a FIFO would block the first product.
std::string file_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "";
  try {
    return io::read_input_file(path, "tuned products' choices file");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tuned products: %s (its shapes are timed again)\n", e.what());
    return "";
  }
}

}  // namespace

TunedChoiceFile::TunedChoiceFile(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) choices_ = parse_choices(file_text(path_), path_);
}

std::string TunedChoiceFile::find(const std::string& key) const {
  const auto it = choices_.find(key);
  return it == choices_.end() ? std::string() : it->second;
}

void TunedChoiceFile::add(const std::string& key, const std::string& choice) {
  choices_.emplace(key, choice);
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::map<std::string, std::string> merged;
  // Another process may have added shapes since this one read the file: merged, not replaced.
  io::update_file_atomically(path_, [&](const std::string* current) {
    merged = current != nullptr ? parse_choices(*current, path_) : decltype(merged){};
    merged.emplace(key, choice);
    std::ostringstream text;
    text << "# minrnn's tuned products (ops/tuned_gemm_cuda.h): a shape's key, a tab, the choice "
            "its first process timed\n";
    for (const auto& [k, c] : merged) text << k << '\t' << c << '\n';
    return text.str();
  });
  for (const auto& [k, c] : merged) choices_.emplace(k, c);
}

std::string choice_text(const TunedChoice& choice) {
  if (choice.libtorch) return "libtorch";
  std::string text = "cublaslt ";
  char word[17];
  for (const uint64_t w : choice.algo) {
    std::snprintf(word, sizeof word, "%016llx", static_cast<unsigned long long>(w));
    text += word;
  }
  return text;
}

std::optional<TunedChoice> parse_choice(const std::string& text) {
  TunedChoice choice;
  if (text == "libtorch") {
    choice.libtorch = true;
    return choice;
  }
  const std::string prefix = "cublaslt ";
  constexpr size_t kDigits = 16;
  if (text.size() != prefix.size() + kDigits * TunedChoice::kAlgoWords ||
      text.compare(0, prefix.size(), prefix) != 0 ||
      text.find_first_not_of("0123456789abcdef", prefix.size()) != std::string::npos) {
    return std::nullopt;
  }
  for (int i = 0; i < TunedChoice::kAlgoWords; ++i) {
    choice.algo[i] = std::stoull(text.substr(prefix.size() + kDigits * i, kDigits), nullptr, 16);
  }
  return choice;
}

std::string tuned_choice_path(const std::string& device) {
  if (const std::string file = io::env_or("MINRNN_TUNED_GEMM_FILE", ""); !file.empty()) {
    return file == "off" ? std::string() : file;
  }
  const std::string home = io::env_or("HOME", "");
  const std::string base = io::env_or("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
  if (base.empty()) return "";
  std::string name = device;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == ' ' || c == '/'; }, '-');
  return base + "/minrnn/tuned-gemm/" + name + ".tsv";
}

}  // namespace minrnn::core
