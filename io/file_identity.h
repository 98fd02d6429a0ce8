// Which file a name held when it was checked, so that a later look can tell whether the name now
// holds another: files here are replaced by a rename (a checkpoint's save, a download's commit),
// which gives the name a new inode.
#pragma once
#include <sys/types.h>

#include <ctime>
#include <string>

namespace minrnn::io {

// The same device and inode, and (an inode number is reused as soon as a file is removed) the same
// last change of its status.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  timespec changed{};  // st_ctim: set by every write, and by a rename
  bool same_inode(const FileIdentity& o) const { return device == o.device && inode == o.inode; }
  bool operator==(const FileIdentity& o) const {
    return same_inode(o) && changed.tv_sec == o.changed.tv_sec &&
           changed.tv_nsec == o.changed.tv_nsec;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

// The identity of the file at `path`, or of the open `fd`; false when there is none.
bool identity_of(const std::string& path, FileIdentity* id);
bool identity_of(int fd, FileIdentity* id);

}  // namespace minrnn::io
