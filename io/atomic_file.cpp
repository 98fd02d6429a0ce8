#include "io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace minrnn::io {

void commit_file(const std::string& tmp, const std::string& path) {
  // std::rename rather than std::filesystem: torch-linked binaries carry a second copy of the
  // std::filesystem symbols (see tests/temp_dir.h); plain C calls avoid the clash.
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    remove_file_quietly(tmp);
    throw std::runtime_error("cannot replace " + path + " with " + tmp + ": " + why);
  }
}

void remove_file_quietly(const std::string& path) {
  std::remove(path.c_str());
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  replace_file_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error("cannot open " + tmp + " for writing: " + std::strerror(errno));
    out << contents;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  });
}

}  // namespace minrnn::io
