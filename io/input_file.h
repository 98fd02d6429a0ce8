// A file the user named on the command line (a config, a sweep file) or one a dataset brings (its
// metadata.json): its text, or an error that says why it cannot be read — no such file (with the
// name beside it most likely meant: a .yml for a .yaml, a typo), a directory, not a regular file
// (a FIFO would block, /dev/zero never end), larger than a text of its kind can be, or the
// system's reason.
#pragma once
#include <cstdint>
#include <string>

namespace minrnn::io {

// The entry of missing's folder whose name is closest to its name (io::closest_name); "" where
// none is that close or the folder cannot be listed.
std::string nearby_name(const std::string& missing);
// " (did you mean 'DIR/NAME'?)" for nearby_name's entry; "" where there is none.
std::string nearby_name_hint(const std::string& missing);

// "PATH: no such WHAT" with nearby_name_hint's offer: the message for a path that is not there.
std::string no_such(const std::string& path, const std::string& what);

// Throws std::invalid_argument "PATH: no such WHAT (did you mean 'DIR/NAME'?)", "PATH: a
// directory, not a WHAT", "PATH: not a regular file", "PATH: N bytes, more than a WHAT can be
// (MAX)" or "PATH: cannot read the WHAT: REASON".
constexpr uintmax_t kMaxInputFileBytes = uintmax_t{64} << 20;
std::string read_input_file(const std::string& path, const std::string& what,
                            uintmax_t max_bytes = kMaxInputFileBytes);

}  // namespace minrnn::io
