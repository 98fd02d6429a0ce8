// A fresh directory per test under the system temp dir, removed with its contents at scope exit.
// Shared by every test folder.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace minrnn::testing {

struct TempDir {
  std::filesystem::path path;

  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info ? std::string(info->test_suite_name()) + "_" + info->name() : "test";
    for (char& ch : name) {
      if (ch == '/') ch = '_';  // parameterised test names
    }
    static int serial = 0;  // several TempDirs in one test stay apart
    path = std::filesystem::temp_directory_path() /
           ("minrnn_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    remove_tree(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { remove_tree(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path / name).string(); }

  // Not std::filesystem::remove_all: torch 2.11's libtorch.so exports its own copy of that symbol,
  // which segfaults when it wins symbol resolution in a binary linked with LibTorch.
  static void remove_tree(const std::filesystem::path& p) {
    std::error_code ec;
    if (std::filesystem::is_directory(std::filesystem::symlink_status(p, ec))) {
      for (const auto& entry : std::filesystem::directory_iterator(p, ec))
        remove_tree(entry.path());
    }
    std::filesystem::remove(p, ec);
  }
};

}  // namespace minrnn::testing
