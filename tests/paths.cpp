#include "tests/paths.h"

namespace minrnn::testing {

const std::string& source_dir() {
  static const std::string dir = MINRNN_SOURCE_DIR;
  return dir;
}

const std::string& binary_dir() {
  static const std::string dir = MINRNN_BINARY_DIR;
  return dir;
}

}  // namespace minrnn::testing
