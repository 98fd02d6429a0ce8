#include "io/atomic_dir.h"

#include <stdexcept>
#include <system_error>

namespace minrnn::io {

namespace fs = std::filesystem;

void remove_tree(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    for (const auto& entry : fs::directory_iterator(path, ec)) remove_tree(entry.path());
  }
  fs::remove(path, ec);
}

namespace {

// "data/x/" and "data/x" are the same directory; its siblings are named from the second form.
fs::path without_trailing_slash(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  while (p.has_parent_path() && p.filename().empty()) p = p.parent_path();
  if (p.empty() || p == "." || p == "/") {
    throw std::runtime_error("'" + dir + "': not a directory that can be replaced");
  }
  return p;
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) {
    throw std::runtime_error("cannot move " + from.string() + " to " + to.string() + " (" +
                             ec.message() + ")");
  }
}

}  // namespace

AtomicDir::AtomicDir(const std::string& dir)
    : dir_(without_trailing_slash(dir)),
      staging_(dir_.string() + ".tmp"),
      old_(dir_.string() + ".old") {
  std::error_code ec;
  if (!fs::exists(dir_, ec) && fs::exists(old_, ec)) rename_or_throw(old_, dir_);
  remove_tree(staging_);
  fs::create_directories(staging_, ec);
  if (ec)
    throw std::runtime_error("cannot create " + staging_.string() + " (" + ec.message() + ")");
}

AtomicDir::~AtomicDir() {
  if (!committed_) remove_tree(staging_);
}

void AtomicDir::commit() {
  std::error_code ec;
  remove_tree(old_);
  const bool replacing = fs::exists(dir_, ec);
  if (replacing) rename_or_throw(dir_, old_);
  try {
    rename_or_throw(staging_, dir_);
  } catch (...) {
    if (replacing) fs::rename(old_, dir_, ec);  // the old one back; the error above says why
    throw;
  }
  committed_ = true;
  remove_tree(old_);
}

}  // namespace minrnn::io
