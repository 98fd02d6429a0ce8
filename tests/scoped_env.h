// An environment variable set (or unset) for a scope's life, its earlier value put back after.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace minrnn::testing {

class ScopedEnv {
 public:
  // `value` nullopt: unset for the scope.
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* was = std::getenv(name_.c_str())) was_ = was;
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (was_) {
      setenv(name_.c_str(), was_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> was_;
};

}  // namespace minrnn::testing
