#include "io/env_switch.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace minrnn::io {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool env_switch(const char* name, bool otherwise, const char* off, const char* on,
                const char* meaning) {
  const char* asked = std::getenv(name);
  if (asked == nullptr || *asked == '\0') return otherwise;
  const std::string value = asked;
  if (value != off && value != on) {
    throw std::invalid_argument(std::string(name) + "=" + value + ": expected " + meaning);
  }
  return value == on;
}

}  // namespace minrnn::io
