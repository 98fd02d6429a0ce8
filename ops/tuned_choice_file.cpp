#include "ops/tuned_choice_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"

namespace minrnn::core {
namespace {

// The file's lines as key → choice; a line without a tab, or with an empty side, is skipped with
// a warning (a file cut short, or edited by hand).
std::map<std::string, std::string> read_choices(const std::string& path) {
  std::map<std::string, std::string> choices;
  std::ifstream in(path);
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

// An exclusive flock on <path>.lock while it lives, waited for: add()'s read, merge and replace
// are one step across processes.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
      throw io::WriteError(io::write_failure(path + ".lock", std::strerror(errno)));
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

TunedChoiceFile::TunedChoiceFile(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) choices_ = read_choices(path_);
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
  const FileLock lock(path_);
  std::map<std::string, std::string> merged = read_choices(path_);
  merged.emplace(key, choice);
  std::ostringstream text;
  text << "# minrnn's tuned products (ops/tuned_gemm_cuda.h): a shape's key, a tab, the choice "
          "its first process timed\n";
  for (const auto& [k, c] : merged) text << k << '\t' << c << '\n';
  io::write_file_atomically(path_, text.str());
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
  if (const char* file = std::getenv("MINRNN_TUNED_GEMM_FILE"); file && *file) {
    return std::string(file) == "off" ? std::string() : std::string(file);
  }
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = std::string(home) + "/.cache";
  } else {
    return "";
  }
  std::string name = device;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == ' ' || c == '/'; }, '-');
  return base + "/minrnn/tuned-gemm/" + name + ".tsv";
}

}  // namespace minrnn::core
