#include "io/shell_word.h"

namespace minrnn::io {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_word(const std::string& s) {
  static const char kPlain[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
  const bool plain = !s.empty() && s.find_first_not_of(kPlain) == std::string::npos;
  return plain ? s : shell_quote(s);
}

}  // namespace minrnn::io
