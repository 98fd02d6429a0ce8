// A fresh directory per test under the system temp dir, removed with its contents at scope exit.
// Shared by every test folder.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "io/atomic_dir.h"

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

  static void remove_tree(const std::filesystem::path& p) { io::remove_tree(p); }
};

}  // namespace minrnn::testing
