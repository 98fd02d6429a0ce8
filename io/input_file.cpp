#include "io/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "io/name_list.h"

namespace minrnn::io {

namespace fs = std::filesystem;

std::string nearby_name(const std::string& missing) {
  const fs::path path(missing);
  const fs::path dir = path.parent_path();
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
    if (names.size() >= 4096) break;  // a huge folder is not worth the wait
  }
  return closest_name(path.filename().string(), names);
}

std::string nearby_name_hint(const std::string& missing) {
  const std::string meant = nearby_name(missing);
  if (meant.empty()) return "";
  return did_you_mean_text((fs::path(missing).parent_path() / meant).string());
}

std::string no_such(const std::string& path, const std::string& what) {
  return path + ": no such " + what + nearby_name_hint(path);
}

std::string read_input_file(const std::string& path, const std::string& what, uintmax_t max_bytes) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) {
    throw std::invalid_argument(no_such(path, what));
  }
  if (status.type() == fs::file_type::directory) {
    throw std::invalid_argument(path + ": a directory, not a " + what);
  }
  if (status.type() != fs::file_type::regular && status.type() != fs::file_type::none) {
    throw std::invalid_argument(path + ": not a regular file (a " + what + " is read from one)");
  }
  if (const uintmax_t bytes = fs::file_size(path, ec); !ec && bytes > max_bytes) {
    throw std::invalid_argument(path + ": " + std::to_string(bytes) + " bytes, more than a " +
                                what + " can be (" + std::to_string(max_bytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::invalid_argument(path + ": cannot read the " + what + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw std::invalid_argument(path + ": cannot read the " + what + ": " + std::strerror(errno));
  }
  return text.str();
}

}  // namespace minrnn::io
