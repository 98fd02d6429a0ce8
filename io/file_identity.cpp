#include "io/file_identity.h"

#include <sys/stat.h>

namespace minrnn::io {

bool identity_of(const std::string& path, FileIdentity* id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  *id = {st.st_dev, st.st_ino, st.st_ctim};
  return true;
}

bool identity_of(int fd, FileIdentity* id) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  *id = {st.st_dev, st.st_ino, st.st_ctim};
  return true;
}

}  // namespace minrnn::io
