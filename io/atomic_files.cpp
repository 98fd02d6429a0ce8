#include "io/atomic_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "io/name_list.h"

namespace minrnn::io {
namespace {

// One file of the set while it is committed: its previous version, kept at kept_name(path) until
// the whole set is in place.
struct Kept {
  std::string path, old;
  bool existed = false;
  bool old_is_all_left = false;  // it could not be put back: its previous contents are in `old`
};

// Keeps the file at `k.path` (if any) at k.old: a hard link, or a copy where links fail (a file
// system without them; an immutable file, which cannot be linked but still read).
void keep_previous(Kept& k) {
  struct stat st;
  k.existed = ::stat(k.path.c_str(), &st) == 0;
  remove_file_quietly(k.old);  // one a killed commit left
  if (!k.existed || ::link(k.path.c_str(), k.old.c_str()) == 0) return;
  std::ifstream in(k.path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in) throw WriteError(write_failure(k.path, "cannot read it to keep a copy"));
  write_file_atomically(k.old, contents.str());
}

// Puts back what `k` held before its rename; "" or why it could not.
std::string put_back(const Kept& k) {
  if (k.existed ? std::rename(k.old.c_str(), k.path.c_str()) == 0
                : ::unlink(k.path.c_str()) == 0 || errno == ENOENT)
    return "";
  return k.path + " could not be put back: " + std::strerror(errno) +
         (k.existed ? " (its previous contents are in " + k.old + ")" : " (it is new)");
}

}  // namespace

std::string kept_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t at = slash == std::string::npos ? 0 : slash + 1;
  // A hidden name no user gives a file: a user's own <path>.old (a backup) is never touched.
  return path.substr(0, at) + "." + path.substr(at) + ".minrnn-kept";
}

void commit_all_or_none(const std::vector<AtomicFile*>& files) {
  std::vector<std::string> paths;
  for (const AtomicFile* f : files) paths.push_back(f->path());
  const std::string unchanged = " (" + names_phrase(paths) + " are unchanged)";
  // A folder in a later file's place would fail its rename after the earlier ones'.
  for (const std::string& path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw WriteError("cannot write " + path + ": it is a folder" + unchanged);
  }
  std::vector<Kept> kept;
  struct Forget {  // the kept copies go once the set is in place, or put back
    std::vector<Kept>& kept;
    ~Forget() {
      for (const Kept& k : kept)
        if (!k.old_is_all_left) remove_file_quietly(k.old);
    }
  } forget{kept};
  for (const std::string& path : paths) {
    kept.push_back({path, kept_name(path)});
    try {
      keep_previous(kept.back());
    } catch (const WriteError& e) {
      throw WriteError(e.what() + unchanged);
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    try {
      files[i]->commit();
    } catch (const WriteError& e) {
      std::vector<std::string> restored;
      std::string lost;
      for (size_t j = 0; j < i; ++j) {
        const std::string why = put_back(kept[j]);
        kept[j].old_is_all_left = !why.empty() && kept[j].existed;
        if (why.empty())
          restored.push_back(kept[j].path);
        else
          lost += "; " + why;
      }
      std::string said = e.what();
      if (!restored.empty())
        said += "; " + names_phrase(restored) + (restored.size() == 1 ? " was" : " were") +
                " put back as before";
      throw WriteError(said + lost);
    }
  }
}

}  // namespace minrnn::io
