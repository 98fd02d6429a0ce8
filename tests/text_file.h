// Whole files as text, for tests that check what a command wrote.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace minrnn::testing {

// The file's bytes ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace minrnn::testing
