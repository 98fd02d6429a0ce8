// Several files replaced all or none (a report's table3.md, .csv and .json): each written in full
// to its own AtomicFile first, then committed together, so that a reader never pairs a new table
// with an old one after a failure.
#pragma once
#include <vector>

#include "io/atomic_file.h"

namespace minrnn::io {

// Commits `files` (each written in full) all or none. A folder in any one's place is refused
// before anything changes. The files there now are kept (a hard link each, kept_name(path), a copy
// where the file system has no links) while the temps are renamed in, one by one; a rename that
// fails (an immutable file, a temp removed under us) puts the files already replaced back and
// removes those that were new. Throws WriteError naming the file that failed, its reason and what
// was put back (or, where putting back failed too, the kept name that holds the previous file).
// A kill between two renames leaves the previous files at their kept names; the next commit of
// the same paths replaces those.
void commit_all_or_none(const std::vector<AtomicFile*>& files);
// Where commit_all_or_none keeps `path`'s previous file: DIR/.NAME.minrnn-kept (hidden, and a name
// only minrnn makes: a user's own NAME.old is theirs).
std::string kept_name(const std::string& path);

}  // namespace minrnn::io
