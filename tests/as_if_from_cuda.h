// What a GPU run writes, made without a GPU: a copy of a LibTorch archive whose every tensor says
// it was written on cuda:0. Shared by the checkpoint tests of the decision agent and of SAC.
#pragma once
#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace minrnn::testing {

// The archive's pickle names each storage's device as a string; nothing else in it is exactly
// "cpu". Returns how many names were rewritten (the pickle memoizes the string, so ≥ 1).
inline int64_t write_as_if_from_cuda(const std::filesystem::path& from,
                                     const std::filesystem::path& to) {
  caffe2::serialize::PyTorchStreamReader reader(from.string());
  caffe2::serialize::PyTorchStreamWriter writer(to.string());
  writer.setMinVersion(reader.version());
  const std::string cpu(
      "X\x03\x00\x00\x00"
      "cpu",
      8),
      cuda(
          "X\x06\x00\x00\x00"
          "cuda:0",
          11);
  int64_t rewritten = 0;
  for (const std::string& name : reader.getAllRecords()) {
    // The writer adds these itself.
    if (name == "version" || name == ".data/version" || name == ".data/serialization_id") continue;
    auto [data, size] = reader.getRecord(name);
    std::string bytes(static_cast<const char*>(data.get()), size);
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, ".pkl") == 0) {
      for (size_t at = bytes.find(cpu); at != std::string::npos; at = bytes.find(cpu, at)) {
        bytes.replace(at, cpu.size(), cuda);
        at += cuda.size();
        ++rewritten;
      }
    }
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
  return rewritten;
}

}  // namespace minrnn::testing
