// Where the tests find the checkout and the build. Only tests/paths.cpp is compiled with the two
// absolute paths, so no other test source differs between clones: a second clone's compiles hit
// the ccache the first one filled (CMakeLists.txt, ccache's base_dir).
#pragma once
#include <string>

namespace minrnn::testing {

const std::string& source_dir();  // the checkout: configs/, scripts/, tests/ data
const std::string& binary_dir();  // the build: the minrnn binary

}  // namespace minrnn::testing
