#include "seam/runtime/nvrtc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "seam/runtime/cuda_home.h"
#include "seam/runtime/jit.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {
namespace {

namespace fs = std::filesystem;

// The slice of NVRTC's C API Seam calls, declared here so building needs
// no CUDA headers.
using NvrtcProgram = struct NvrtcProgramOpaque*;
struct Nvrtc {
  void* handle = nullptr;
  std::string error;  // why it could not be opened
  int (*version)(int*, int*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  int (*log_size)(NvrtcProgram, size_t*) = nullptr;
  int (*log)(NvrtcProgram, char*) = nullptr;
  int (*ptx_size)(NvrtcProgram, size_t*) = nullptr;
  int (*ptx)(NvrtcProgram, char*) = nullptr;
  int (*cubin_size)(NvrtcProgram, size_t*) = nullptr;
  int (*cubin)(NvrtcProgram, char*) = nullptr;
  int (*destroy)(NvrtcProgram*) = nullptr;
};

template <typename F>
bool Bind(void* handle, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  return f != nullptr;
}

Nvrtc Open() {
  Nvrtc n;
  absl::StatusOr<void*> handle =
      OpenCudaLibrary("NVRTC", {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}, "libnvrtc.so");
  if (!handle.ok()) {
    n.error = std::string(handle.status().message());
    return n;
  }
  n.handle = *handle;
  bool ok = Bind(n.handle, "nvrtcVersion", n.version) &&
            Bind(n.handle, "nvrtcGetErrorString", n.error_string) &&
            Bind(n.handle, "nvrtcCreateProgram", n.create) &&
            Bind(n.handle, "nvrtcCompileProgram", n.compile) &&
            Bind(n.handle, "nvrtcGetProgramLogSize", n.log_size) &&
            Bind(n.handle, "nvrtcGetProgramLog", n.log) &&
            Bind(n.handle, "nvrtcGetPTXSize", n.ptx_size) && Bind(n.handle, "nvrtcGetPTX", n.ptx) &&
            Bind(n.handle, "nvrtcGetCUBINSize", n.cubin_size) &&
            Bind(n.handle, "nvrtcGetCUBIN", n.cubin) &&
            Bind(n.handle, "nvrtcDestroyProgram", n.destroy);
  if (!ok) {
    n.error = "the NVRTC library found lacks part of its C API";
    n.handle = nullptr;
  }
  return n;
}

const Nvrtc& Library() {
  static const Nvrtc* library = new Nvrtc(Open());
  return *library;
}

absl::Status CheckArch(const std::string& arch) {
  bool digits = arch.size() >= 5 && absl::StartsWith(arch, "sm_");
  for (size_t i = 3; digits && i < arch.size(); ++i) digits = std::isdigit(arch[i]) != 0;
  if (!digits) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown CUDA target '", arch, "': expected sm_<major><minor>, e.g. sm_90"));
  }
  return absl::OkStatus();
}

// The toolkit's header directories kernels include from (libcu++ lives
// in include/cccl since CUDA 13).
std::vector<std::string> IncludeDirectories() {
  std::vector<std::string> dirs;
  for (const char* dir : {"/include", "/include/cccl"}) {
    std::string path = absl::StrCat(CudaHome(), dir);
    std::error_code error;
    if (fs::is_directory(path, error)) dirs.push_back(path);
  }
  return dirs;
}

// The options every kernel compiles with: plain functions are device code
// (the prelude's shared semantics), IEEE float math (no fast-math).
// `gpu` is compute_XX for PTX, sm_XX for a cubin.
std::vector<std::string> Options(const std::string& gpu) {
  return {"-default-device", "-std=c++20", absl::StrCat("--gpu-architecture=", gpu)};
}

// What NVRTC gives back: PTX (compute_XX targets) or a cubin (sm_XX),
// and its log.
struct NvrtcOutput {
  std::string ptx;
  std::string cubin;
  std::string log;
};

absl::StatusOr<NvrtcOutput> RunNvrtc(const Nvrtc& n, const std::string& source,
                                     const std::vector<std::string>& options, bool want_ptx) {
  NvrtcProgram program = nullptr;
  if (int rc = n.create(&program, source.c_str(), "seam_kernels.cu", 0, nullptr, nullptr); rc != 0) {
    return absl::InternalError(absl::StrCat("nvrtcCreateProgram: ", n.error_string(rc)));
  }
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  int rc = n.compile(program, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  size_t size = 0;
  n.log_size(program, &size);
  out.log.assign(size, '\0');
  if (size > 0) n.log(program, out.log.data());
  if (rc == 0 && want_ptx) {
    n.ptx_size(program, &size);
    out.ptx.assign(size, '\0');
    n.ptx(program, out.ptx.data());
  } else if (rc == 0) {
    n.cubin_size(program, &size);
    out.cubin.assign(size, '\0');
    n.cubin(program, out.cubin.data());
  }
  n.destroy(&program);
  for (std::string* text : {&out.ptx, &out.log}) {
    while (!text->empty() && text->back() == '\0') text->pop_back();
  }
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("NVRTC failed on generated kernels (",
                                            absl::StrJoin(options, " "), "): ", n.error_string(rc),
                                            "\n", out.log.substr(0, 4000)));
  }
  return out;
}

// The first line of a cache entry: its key and the hashes of what it holds.
// An entry is used only when this line matches, so a truncated, edited or
// foreign entry is rebuilt, never handed to the driver, which would trust it.
std::string EntryHeader(const std::string& key, const std::string& text, const std::string& cubin) {
  return absl::StrCat("// seam_cache_key ", key, " text=", StableHash(text),
                      " cubin=", StableHash(cubin));
}

// The cached text and cubin at `path` and `cubin_path` for `key`, or
// nullopt when the entry is missing or not whole.
std::optional<std::pair<std::string, std::string>> ReadEntry(const std::string& key,
                                                             const std::string& path,
                                                             const std::string& cubin_path,
                                                             bool want_ptx) {
  absl::StatusOr<std::string> entry = ReadRegularFile(path);
  absl::StatusOr<std::string> cubin = want_ptx ? std::string() : ReadRegularFile(cubin_path);
  if (!entry.ok() || !cubin.ok()) return std::nullopt;
  const size_t newline = entry->find('\n');
  if (newline == std::string::npos) return std::nullopt;
  std::string text = entry->substr(newline + 1);
  if (entry->compare(0, newline, EntryHeader(key, text, *cubin)) != 0) return std::nullopt;
  return std::make_pair(std::move(text), std::move(*cubin));
}

// Runs NVRTC on `source` with `options`, or finds the result in the cache:
// the PTX (`want_ptx`) or the log in a file named by the key and `suffix`,
// and for a cubin compile the cubin beside it.
absl::StatusOr<NvrtcResult> CachedNvrtc(const std::string& source, std::vector<std::string> options,
                                        const std::string& suffix, bool want_ptx) {
  absl::StatusOr<std::string> version = NvrtcVersion();
  if (!version.ok()) return version.status();
  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<std::string> includes = IncludeDirectories();
  if (includes.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUDA headers kernels include (libcu++, cooperative groups) are not under ", CudaHome(),
        "/include; set SEAM_CUDA_HOME to the CUDA toolkit"));
  }
  for (const std::string& dir : includes) options.push_back("-I" + dir);
  std::string key =
      StableHash(absl::StrCat(source, "\nnvrtc ", *version, "\n", absl::StrJoin(options, " ")));
  absl::StatusOr<std::string> dir = CacheDirectory();
  if (!dir.ok()) return dir.status();
  std::string path = absl::StrCat(*dir, "/", key, suffix);
  std::string cubin_path = absl::StrCat(*dir, "/", key, ".cubin");
  if (auto cached = ReadEntry(key, path, cubin_path, want_ptx)) {
    return NvrtcResult{std::move(cached->first), std::move(cached->second), true, seconds(), path};
  }
  absl::StatusOr<NvrtcOutput> output = RunNvrtc(Library(), source, options, want_ptx);
  if (!output.ok()) return output.status();
  std::string text = want_ptx ? std::move(output->ptx) : std::move(output->log);
  // The cubin first: the text file is what marks the entry present.
  if (!want_ptx) SEAM_RETURN_IF_ERROR(WriteFileAtomically(cubin_path, output->cubin));
  SEAM_RETURN_IF_ERROR(
      WriteFileAtomically(path, absl::StrCat(EntryHeader(key, text, output->cubin), "\n", text)));
  return NvrtcResult{std::move(text), std::move(output->cubin), false, seconds(), path};
}

}  // namespace

absl::Status NvrtcAvailable() {
  const Nvrtc& n = Library();
  if (n.handle == nullptr) return absl::UnavailableError(n.error);
  return absl::OkStatus();
}

absl::StatusOr<std::string> NvrtcVersion() {
  if (absl::Status available = NvrtcAvailable(); !available.ok()) return available;
  int major = 0, minor = 0;
  Library().version(&major, &minor);
  return absl::StrCat(major, ".", minor);
}

absl::StatusOr<NvrtcResult> CompileToPtx(const std::string& source, const std::string& arch) {
  if (absl::Status valid = CheckArch(arch); !valid.ok()) return valid;
  return CachedNvrtc(source, Options(absl::StrCat("compute_", arch.substr(3))), ".ptx",
                     /*want_ptx=*/true);
}

absl::StatusOr<NvrtcResult> CompileToCubin(const std::string& source, const std::string& arch) {
  if (absl::Status valid = CheckArch(arch); !valid.ok()) return valid;
  std::vector<std::string> options = Options(arch);
  options.push_back("--ptxas-options=-v");
  options.push_back("-w");  // the report only: no warnings about unused prelude functions
  return CachedNvrtc(source, options, ".ptxas.txt", /*want_ptx=*/false);
}

}  // namespace seam::runtime
