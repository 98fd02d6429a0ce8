// The torch wheel's libtorch.so and libtorch_cpu.so export a copy of std::filesystem built with an
// older toolchain. Where they were loaded ahead of libstdc++, that copy served our calls, and on a
// system with a newer libstdc++ (a lent H200, 2026-11-27) its remove_all jumped to address 0.
// minrnn_use_torch (cmake/Targets.cmake) links libstdc++ first; this checks where a call lands.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace minrnn {
namespace {

// The shared object holding `function` as the dynamic linker resolved it ("" when unknown).
std::string library_holding(const void* function) {
  Dl_info info{};
  if (dladdr(function, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

TEST(Linking, StdFilesystemCallsReachTheSystemsLibstdcxx) {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&);
  using Remove = bool (*)(const std::filesystem::path&, std::error_code&);
  const RemoveAll remove_all = &std::filesystem::remove_all;
  const Remove remove = &std::filesystem::remove;
  for (const void* f :
       {reinterpret_cast<const void*>(remove_all), reinterpret_cast<const void*>(remove)}) {
    const std::string library = library_holding(f);
    EXPECT_NE(library.find("libstdc++"), std::string::npos) << "resolved to " << library;
  }
}

}  // namespace
}  // namespace minrnn
