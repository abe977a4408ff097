#include "seam/target/device_spec.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "seam/util/files.h"
#include "seam/util/machine.h"

namespace seam::target {
namespace {

// Per-block limits shared by NVIDIA's data-center GPUs since Volta.
DeviceSpec NvidiaDefaults() {
  DeviceSpec d;
  d.kind = DeviceKind::kGpu;
  d.max_blocks_per_unit = 2;  // 1024-thread blocks, 2048 threads per SM
  d.max_threads_per_block = 1024;
  d.max_threads_per_unit = 2048;
  d.registers_per_unit = 65536;
  d.vector_bytes = 16;
  d.transcendental_cost = 8;
  d.block_barrier_us = 0.02;
  return d;
}

int64_t SysconfOr(int name, int64_t fallback) {
  long value = sysconf(name);
  return value > 0 ? value : fallback;
}

// The size of cpu0's cache of `level` as the kernel reports it in sysfs
// (what lscpu shows: inside a VM, sysconf may report the whole host's L3),
// else sysconf's, else `fallback`.
int64_t CacheBytes(int level, int sysconf_name, int64_t fallback) {
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int found_level = 0;
    std::string type, size;
    if (!(level_file >> found_level) || !(type_file >> type) || !(size_file >> size)) break;
    if (found_level != level || type == "Instruction" || size.empty()) continue;
    int64_t value = 0;
    const char* unit = std::from_chars(size.data(), size.data() + size.size(), value).ptr;
    if (*unit == 'K') value <<= 10;
    if (*unit == 'M') value <<= 20;
    if (value > 0) return value;
  }
  return SysconfOr(sysconf_name, fallback);
}

// The most last-level cache a core can count on (see HostCpuSpec): a VM's
// few cores see the whole socket's L3, shared with other tenants. A 2-vCPU
// VM of a 300 MB-L3 Xeon reads 8-64 MB at 32 GB/s and 128 MB or more at
// 18 GB/s, its DRAM's speed.
constexpr int64_t kCacheBytesPerCore = int64_t{16} << 20;

}  // namespace

DeviceSpec H100Spec() {
  DeviceSpec d = NvidiaDefaults();
  d.name = "h100";
  d.units = 132;  // SXM5
  d.onchip_bytes_per_block = 227 * 1024;
  d.onchip_bytes_per_unit = 228 * 1024;
  d.last_level_cache_bytes = int64_t{50} << 20;
  d.dram_gbps = 3350;
  d.cache_gbps = 10000;
  d.flops_per_ns = 132 * 128 * 1.75;  // fp32 lanes x GHz
  d.launch_us = 3.0;
  d.grid_barrier_us = 1.5;
  return d;
}

DeviceSpec A100Spec() {
  DeviceSpec d = NvidiaDefaults();
  d.name = "a100";
  d.units = 108;
  d.onchip_bytes_per_block = 163 * 1024;
  d.onchip_bytes_per_unit = 164 * 1024;
  d.last_level_cache_bytes = int64_t{40} << 20;
  d.dram_gbps = 2039;
  d.cache_gbps = 5000;
  d.flops_per_ns = 108 * 64 * 1.41;
  d.launch_us = 4.0;
  d.grid_barrier_us = 2.0;
  return d;
}

namespace {

// Settings from the environment are read once; one that cannot be used is
// ignored, saying so once, as SEAM_NUM_THREADS is.
void Ignoring(const char* name, const std::string& value, const std::string& why) {
  std::fprintf(stderr, "seam: ignoring %s=%s (%s)\n", name, value.c_str(), why.c_str());
}

// SEAM_CPU_BANDWIDTH_GBPS, the DRAM bandwidth the CPU cost model assumes,
// or its default of 20 GB/s.
double ConfiguredBandwidthGbps() {
  static const double gbps = [] {
    const char* env = std::getenv("SEAM_CPU_BANDWIDTH_GBPS");
    if (env == nullptr || *env == '\0') return 20.0;
    double value = 0;
    if (absl::SimpleAtod(env, &value) && value >= 1 && value <= 1e5) return value;
    Ignoring("SEAM_CPU_BANDWIDTH_GBPS", env, "want GB/s from 1 to 100000");
    return 20.0;
  }();
  return gbps;
}

// Constants fitted by `seam bench --calibrate --calibration-out=FILE`, when
// SEAM_CPU_CALIBRATION names that file; an empty object otherwise.
const nlohmann::json& Calibration() {
  static const nlohmann::json* constants = [] {
    auto* none = new nlohmann::json(nlohmann::json::object());
    const char* path = std::getenv("SEAM_CPU_CALIBRATION");
    if (path == nullptr || *path == '\0') return none;
    absl::StatusOr<std::string> text = ReadRegularFile(path);
    if (!text.ok()) {
      Ignoring("SEAM_CPU_CALIBRATION", path, std::string(text.status().message()));
      return none;
    }
    nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) {
      Ignoring("SEAM_CPU_CALIBRATION", path, "not a JSON object of fitted constants");
      return none;
    }
    return new nlohmann::json(std::move(parsed));
  }();
  return *constants;
}

// Each positive, finite number of the calibration replaces the default.
void ApplyCalibration(DeviceSpec& d) {
  const nlohmann::json& constants = Calibration();
  auto take = [&](const char* key, double& field) {
    auto it = constants.find(key);
    if (it == constants.end() || !it->is_number()) return;
    const double value = it->get<double>();
    if (value > 0 && std::isfinite(value)) field = value;
  };
  take("dram_gbps", d.dram_gbps);
  take("cache_gbps", d.cache_gbps);
  take("flops_per_ns", d.flops_per_ns);
  take("launch_us", d.launch_us);
  take("grid_barrier_us", d.grid_barrier_us);
}

}  // namespace

DeviceSpec HostCpuSpec() {
  DeviceSpec d;
  d.name = "cpu";
  d.kind = DeviceKind::kCpu;
  d.units = UsableCpus();
  d.max_blocks_per_unit = 1;
  d.max_threads_per_block = 1;
  d.max_threads_per_unit = 1;
  int64_t l2 = CacheBytes(2, _SC_LEVEL2_CACHE_SIZE, 1 << 20);
  // A tile buffer may take half of L2: the other half keeps the tile's
  // inputs for the stages that re-read them.
  d.onchip_bytes_per_block = l2 / 2;
  d.onchip_bytes_per_unit = l2;
  // A VM's few cores see the whole socket's L3, which the other tenants'
  // cores share: counted at most kCacheBytesPerCore a usable core.
  d.last_level_cache_bytes =
      std::min(CacheBytes(3, _SC_LEVEL3_CACHE_SIZE, l2 * d.units), kCacheBytesPerCore * d.units);
  d.vector_bytes = 32;  // AVX2
  d.dram_gbps = ConfiguredBandwidthGbps();
  d.cache_gbps = d.dram_gbps * 4;
  d.flops_per_ns = static_cast<double>(d.units) * 8 * 2.5;  // 8 fp32 lanes x GHz
  d.transcendental_cost = 16;
  d.division_cost = 4;
  d.launch_us = 2.0;  // start and join of a parallel loop on the pool
  d.block_barrier_us = 0;
  d.grid_barrier_us = 0.5;
  ApplyCalibration(d);
  return d;
}

absl::StatusOr<DeviceSpec> DeviceSpecByName(absl::string_view name) {
  if (name == "cpu") return HostCpuSpec();
  if (name == "h100") return H100Spec();
  if (name == "a100") return A100Spec();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", name, "': expected cpu, h100 or a100"));
}

}  // namespace seam::target
