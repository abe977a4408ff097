// Environment variables set for a scope, then put back as they were: the
// libraries Seam opens at run time (OpenBLAS, oneDNN and its OpenMP) read
// their settings once, when they load.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seam::runtime {

class ScopedEnvironment {
 public:
  ScopedEnvironment() = default;
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

  void Set(const char* name, const char* value) {
    Save(name);
    setenv(name, value, 1);
  }
  void Unset(const char* name) {
    Save(name);
    unsetenv(name);
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second.has_value()) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  void Save(const char* name) {
    const char* previous = std::getenv(name);
    saved_.push_back(
        {name, previous != nullptr ? std::optional<std::string>(previous) : std::nullopt});
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace seam::runtime
