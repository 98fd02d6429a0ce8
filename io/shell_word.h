// A word as a POSIX shell reads it back: a command line printed for a user to paste (TensorBoard's
// "watch it" line) or written into a script (a Slurm task's).
#pragma once
#include <string>

namespace minrnn::io {

// `s` in single quotes, each ' in it as '\'': the shell reads it back as it is, whatever it holds.
std::string shell_quote(const std::string& s);
// `s` bare where the shell reads it as it is (letters, digits, _-./=:,+@%), else shell_quote(s).
std::string shell_word(const std::string& s);

}  // namespace minrnn::io
