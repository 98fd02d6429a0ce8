// Whether a path can be written, asked before the work whose result would otherwise be lost: a
// command checks what it will write (an --out, a video folder, a run folder) first.
#pragma once
#include <functional>
#include <string>

namespace minrnn::io {

// The folder `path` names an entry of: "." for a bare name, "/" for one at the root.
std::string folder_of(const std::string& path);

// Why `path` cannot be written as a file, "" when it can: "it names no file" ("" or a trailing /),
// "it is a folder", "its folder F does not
// exist", "... is a file, not a folder", "... is not writable". With `make_folders`, F is the
// nearest folder above it that exists, where the writer makes the missing ones. Checks only: a
// command calls it on what it will write before work whose result would otherwise be lost.
std::string why_unwritable(const std::string& path, bool make_folders);
// why_unwritable(path, make_folders = true), and where it can be written, the folders it needs made
// (an --out of data/x.hdf5 in a fresh checkout). "" when they are there.
std::string make_folders_for(const std::string& path);
// Why an output a user named (a CSV, a log appended to) may not replace or change the file at
// `path`: "" where none is there or its first line is one `first_line_is_kind` knows; else "it
// holds something other than KIND (its first line: '...')". A slip of the name would otherwise
// replace a run's eval.json or write into its config.yaml (a walk, 2026-11-29).
std::string why_not_of_kind(const std::string& path, const std::string& kind,
                            const std::function<bool(const std::string&)>& first_line_is_kind);
// The same for a folder to write files in: "F does not exist", "F is a file, not a folder", "F is
// not writable" ("" when it can be written in). With `make_folders`, F is the nearest of it and
// the folders above it that exists, where the writer makes the missing ones.
std::string why_folder_unwritable(std::string folder, bool make_folders);

}  // namespace minrnn::io
