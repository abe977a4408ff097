#include "seam/util/machine.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace seam {
namespace {

int FromEnvironmentOrAffinity() {
  if (const char* env = std::getenv("SEAM_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (*end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
    std::fprintf(stderr, "seam: ignoring SEAM_NUM_THREADS=%s (want a count from 1 to 1024)\n", env);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

int UsableCpus() {
  static const int cpus = FromEnvironmentOrAffinity();
  return cpus;
}

int64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace seam
