#include "io/writable.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/text.h"

namespace minrnn::io {

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string why_folder_unwritable(std::string folder, bool make_folders) {
  struct stat st;
  // Up to the nearest folder there (ENOTDIR: a file stands where a folder of the path would).
  while (make_folders && folder != "." && folder != "/" && ::stat(folder.c_str(), &st) != 0 &&
         (errno == ENOENT || errno == ENOTDIR)) {
    folder = folder_of(folder);
  }
  if (::stat(folder.c_str(), &st) != 0) {
    const int err = errno;
    return folder + (err == ENOENT ? std::string(" does not exist")
                                   : ": " + std::string(std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) return folder + " is a file, not a folder";
  if (::access(folder.c_str(), W_OK) != 0) return folder + " is not writable";
  // access() answers root yes where a file cannot be made (/proc, some network mounts): a file
  // made and removed is the answer the writer will get. An unnamed one (O_TMPFILE) leaves nothing
  // behind even if this process is killed; where the file system has none, a named one.
  const int unnamed = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (unnamed >= 0) {
    ::close(unnamed);
    return "";
  }
  if (errno == EACCES || errno == EPERM || errno == EROFS)
    return folder + " cannot be written in: " + std::strerror(errno);
  std::string probe = folder + "/.minrnn-write-probe-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0 && errno == ENOENT)  // the folder is there, and refuses new files (/proc)
    return folder + " cannot be written in: no file can be made there";
  if (fd < 0) return folder + " cannot be written in: " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

std::string why_unwritable(const std::string& path, bool make_folders) {
  if (path.empty() || path.back() == '/') return "it names no file";
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return "it is a folder";
  const std::string why = why_folder_unwritable(folder_of(path), make_folders);
  if (!why.empty()) return "its folder " + why;
  // The writer's temp beside it (<name>.tmp) must be a name too: a 251-255-byte name passed,
  // and an eval's episodes ran before its result could not be written (a walk, 2026-11-29).
  const size_t name =
      path.size() - (path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (name + std::strlen(".tmp") > NAME_MAX) {
    return "its name is " + std::to_string(name) +
           " bytes; with the .tmp of the file written beside it first, more than the " +
           std::to_string(NAME_MAX) + " a file name may have";
  }
  return "";
}

std::string make_folders_for(const std::string& path) {
  if (std::string why = why_unwritable(path, /*make_folders=*/true); !why.empty()) return why;
  const std::string folder = folder_of(path);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  return ec ? "cannot make its folder " + folder + ": " + ec.message() : "";
}

std::string why_not_of_kind(const std::string& path, const std::string& kind,
                            const std::function<bool(const std::string&)>& first_line_is_kind) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return "";  // why_unwritable's
  std::ifstream in(path, std::ios::binary);
  std::string first(4096, '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<size_t>(in.gcount()));
  first = first.substr(0, first.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if ((first.empty() && st.st_size == 0) || first_line_is_kind(first)) return "";
  return "it holds something other than " + kind + " (its first line: '" +
         visible(first.substr(0, 60)) + (first.size() > 60 ? "...'" : "'") + "): not replaced";
}

}  // namespace minrnn::io
