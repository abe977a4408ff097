// Compiling generated C++ into a shared object with the system compiler,
// cached on disk: the key is a hash of the source, the compiler's version
// and the flags; entries are written atomically (compile to a temporary,
// rename), so several processes may share the cache. Each object has a
// checksum beside it, checked before it is loaded: an entry that is
// truncated, changed, not a regular file, or loads but is not the one
// expected is rebuilt. The compiler is stopped after
// $SEAM_COMPILER_TIMEOUT seconds (15 minutes by default); temporaries of
// builds killed an hour ago are cleared. The cache lives in
// $SEAM_CACHE_DIR, else $XDG_CACHE_HOME/seam, else ~/.cache/seam.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::runtime {

class SharedObject {
 public:
  explicit SharedObject(void* handle) : handle_(handle) {}
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  // The address of an exported symbol, or an error naming it.
  absl::StatusOr<void*> Symbol(const std::string& name) const;

 private:
  void* handle_;
};

struct CompileResult {
  std::shared_ptr<SharedObject> object;
  bool cache_hit = false;
  double seconds = 0;   // compiling (0 on a cache hit) and loading
  std::string path;     // the shared object in the cache
};

struct CompilerOptions {
  std::string compiler = "c++";
  // Full-width vectors where the host has AVX-512: GCC's default for such
  // hosts is 256-bit, which leaves half of each vector unit idle in the
  // compute-heavy passes of row kernels (layer norm f32 [4096,4096]: 7.7 ->
  // 5.3 ms on 2 cores). Hosts without AVX-512 ignore it. OpenMP for its
  // `simd` loops only: threads come from Seam's pool. No trapping math:
  // kernels never read the floating-point exception flags, and without
  // AVX-512's masks GCC otherwise keeps a float-to-int conversion behind
  // a select as a branch, which leaves the loop scalar (every exp on an
  // AVX2 host: DIEN's kernel built for AVX2 ran 209 ms on 2 cores under
  // trapping math, 50 without it, and 31 built for AVX-512). The values
  // computed are the same.
  std::vector<std::string> flags = {"-O3",
                                    "-march=native",
                                    "-mprefer-vector-width=512",
                                    "-fopenmp-simd",
                                    "-fno-trapping-math",
                                    "-fPIC",
                                    "-shared",
                                    "-std=c++20",
                                    "-fno-math-errno",
                                    "-fvisibility=hidden"};
};

// A 128-bit hash of `text` that is the same in every process, in hex: the
// caches' keys.
std::string StableHash(absl::string_view text);

// The cache directory (created on first use).
absl::StatusOr<std::string> CacheDirectory();

// Compiles `source` (or finds it in the cache) and loads it.
absl::StatusOr<CompileResult> CompileAndLoad(const std::string& source,
                                             const CompilerOptions& options = {});

}  // namespace seam::runtime
