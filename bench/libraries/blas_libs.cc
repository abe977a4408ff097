#include "blas_libs.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace libbench {
namespace {

// Environment variables set while a library loads (they are read once, by
// its initializer), then put back.
class ScopedEnvironment {
 public:
  void Set(const char* name, const char* value) {
    const char* previous = std::getenv(name);
    saved_.emplace_back(name, previous ? std::optional<std::string>(previous) : std::nullopt);
    setenv(name, value, 1);
  }
  void Unset(const char* name) {
    Set(name, "");
    unsetenv(name);
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void* Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error("cannot open " + path + ": " + dlerror());
  return handle;
}

template <typename F>
F Symbol(void* handle, const char* name, bool required = true) {
  void* p = dlsym(handle, name);
  if (p == nullptr && required) throw std::runtime_error(std::string("no symbol ") + name);
  return reinterpret_cast<F>(p);
}

// Where the system's OpenBLAS is (the path the loader resolves).
std::string SystemOpenBlasPath() {
  void* h = Open("libopenblas.so.0");
  void* sym = dlsym(h, "cblas_sgemm");
  Dl_info info{};
  if (sym == nullptr || dladdr(sym, &info) == 0) throw std::runtime_error("cannot locate OpenBLAS");
  std::string path = std::filesystem::canonical(info.dli_fname);
  dlclose(h);
  return path;
}

}  // namespace

const char* SeamCoreType() {
  // The same decision as Seam's CoreTypeForThisCpu (by instruction sets,
  // since virtual machines hide the CPU model OpenBLAS looks at).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

BlasLibrary OpenOpenBlas(const std::string& name, bool force_core, int thread_timeout,
                         const std::string& scratch_dir) {
  std::string path = SystemOpenBlasPath();
  if (name != "openblas") {
    // A second instance needs a file of its own: the loader would hand back
    // the first (same inode) and its initializer would not run again.
    std::filesystem::create_directories(scratch_dir);
    std::string copy = scratch_dir + "/lib" + name + ".so";
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    path = copy;
  }
  void* handle = nullptr;
  {
    ScopedEnvironment env;
    env.Set("OPENBLAS_NUM_THREADS", "1");
    if (force_core) {
      if (const char* core = SeamCoreType()) env.Set("OPENBLAS_CORETYPE", core);
    } else {
      env.Unset("OPENBLAS_CORETYPE");
    }
    if (thread_timeout > 0) env.Set("OPENBLAS_THREAD_TIMEOUT", std::to_string(thread_timeout).c_str());
    handle = Open(path);
  }
  BlasLibrary lib;
  lib.name = name;
  lib.sgemm = Symbol<BlasLibrary::Sgemm>(handle, "cblas_sgemm");
  lib.set_threads = Symbol<void (*)(int)>(handle, "openblas_set_num_threads");
  auto corename = Symbol<char* (*)()>(handle, "openblas_get_corename");
  auto config = Symbol<char* (*)()>(handle, "openblas_get_config");
  lib.info = std::string(config()) + "; core " + corename();
  // Debian's 0.3.21 is built without BUILD_BFLOAT16: no sbgemm to find.
  lib.set_threads(1);
  return lib;
}

BlasLibrary OpenMkl(const std::string& libmkl_rt) {
  BlasLibrary lib;
  lib.name = "mkl";
  void* handle = nullptr;
  {
    // The GNU OpenMP threading layer shares libgomp with oneDNN.
    ScopedEnvironment env;
    env.Set("MKL_THREADING_LAYER", "GNU");
    env.Set("MKL_INTERFACE_LAYER", "LP64");
    handle = Open(libmkl_rt);
    // The upper-case names are the C interface (lower-case: Fortran's, by pointer).
    auto set_layer = Symbol<int (*)(int)>(handle, "MKL_Set_Threading_Layer");
    set_layer(3);  // MKL_THREADING_GNU
    auto version = Symbol<void (*)(char*, int)>(handle, "MKL_Get_Version_String");
    char buf[512] = {};
    version(buf, sizeof buf - 1);
    lib.info = buf;
  }
  lib.sgemm = Symbol<BlasLibrary::Sgemm>(handle, "cblas_sgemm");
  lib.gemm_bf16 = Symbol<BlasLibrary::GemmBf16>(handle, "cblas_gemm_bf16bf16f32");
  // Per calling thread: Seam's pool threads each ask for one.
  auto local = Symbol<int (*)(int)>(handle, "MKL_Set_Num_Threads_Local");
  static int (*set_local)(int) = local;
  lib.set_threads = [](int n) { set_local(n); };
  return lib;
}

BlasLibrary OpenBlis(const std::string& libblis) {
  void* handle = Open(libblis);
  BlasLibrary lib;
  lib.name = "blis";
  // BLIS's own typed API, not its cblas_sgemm: that one calls sgemm_
  // through the global scope, where MKL's (loaded by libmkl_rt with
  // RTLD_GLOBAL) would answer instead.
  using BliSgemm = void (*)(int, int, int64_t, int64_t, int64_t, const float*, const float*, int64_t, int64_t,
                            const float*, int64_t, int64_t, const float*, float*, int64_t, int64_t);
  static BliSgemm bli_sgemm = Symbol<BliSgemm>(handle, "bli_sgemm");
  lib.sgemm = [](int, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
    // Row-major operands as BLIS strides (row, column); transposes as swapped strides.
    const int64_t rsa = ta == kTrans ? 1 : lda, csa = ta == kTrans ? lda : 1;
    const int64_t rsb = tb == kTrans ? 1 : ldb, csb = tb == kTrans ? ldb : 1;
    bli_sgemm(0, 0, m, n, k, &alpha, a, rsa, csa, b, rsb, csb, &beta, c, ldc, 1);  // 0: BLIS_NO_TRANSPOSE
  };
  auto set = Symbol<void (*)(long)>(handle, "bli_thread_set_num_threads");
  static void (*set_blis)(long) = set;
  lib.set_threads = [](int n) { set_blis(n); };
  auto version = Symbol<const char* (*)()>(handle, "bli_info_get_version_str");
  auto arch = Symbol<int (*)()>(handle, "bli_arch_query_id");
  auto arch_name = Symbol<const char* (*)(int)>(handle, "bli_arch_string");
  lib.info = std::string("BLIS ") + version() + "; sub-configuration " + arch_name(arch());
  lib.set_threads(1);
  return lib;
}

}  // namespace libbench
