// A test's own directory: empty when the test starts, removed when it ends,
// and, for tests of Seam's caches, the cache directory (SEAM_CACHE_DIR)
// meanwhile, so a test damages no entry another test or a user relies on.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace seam::testing {

class ScratchDirectory {
 public:
  // Named after `prefix`, the process and the running test.
  explicit ScratchDirectory(const std::string& prefix)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (prefix + "_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    if (const char* cache = std::getenv("SEAM_CACHE_DIR")) previous_cache_ = cache;
  }
  ~ScratchDirectory() {
    if (previous_cache_.empty()) {
      unsetenv("SEAM_CACHE_DIR");
    } else {
      setenv("SEAM_CACHE_DIR", previous_cache_.c_str(), 1);
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Makes `dir` (created when missing) Seam's cache until this is destroyed.
  void UseAsCache(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    setenv("SEAM_CACHE_DIR", dir.c_str(), 1);
  }

 private:
  std::filesystem::path path_;
  std::string previous_cache_;
};

}  // namespace seam::testing
