// oneDNN (Debian's libdnnl2), opened at run time like OpenBLAS and kept to
// one thread per call: Seam's pool splits the work and calls it from its
// own threads, so no OpenMP team spins beside the pool. It is opened with
// OMP_NUM_THREADS=1 and passive waiting, and each calling thread also sets
// its own OpenMP thread count to 1, which holds even when another library
// loaded OpenMP first. Its instruction set is oneDNN's own detection, at
// its widest whatever ONEDNN_MAX_CPU_ISA says. Without the library, the
// calls that would use it go to OpenBLAS.
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::runtime {

struct OneDnn {
  decltype(&dnnl_memory_desc_init_by_strides) memory_desc_init_by_strides = nullptr;
  decltype(&dnnl_memory_desc_init_by_tag) memory_desc_init_by_tag = nullptr;
  decltype(&dnnl_memory_desc_equal) memory_desc_equal = nullptr;
  decltype(&dnnl_matmul_desc_init) matmul_desc_init = nullptr;
  decltype(&dnnl_dilated_convolution_forward_desc_init) convolution_forward_desc_init = nullptr;
  decltype(&dnnl_dilated_convolution_backward_data_desc_init) convolution_backward_data_desc_init =
      nullptr;
  decltype(&dnnl_dilated_convolution_backward_weights_desc_init)
      convolution_backward_weights_desc_init = nullptr;
  decltype(&dnnl_reorder_primitive_desc_create) reorder_primitive_desc_create = nullptr;
  decltype(&dnnl_primitive_attr_create) primitive_attr_create = nullptr;
  decltype(&dnnl_primitive_attr_destroy) primitive_attr_destroy = nullptr;
  decltype(&dnnl_primitive_attr_set_scratchpad_mode) primitive_attr_set_scratchpad_mode = nullptr;
  decltype(&dnnl_primitive_desc_create) primitive_desc_create = nullptr;
  decltype(&dnnl_primitive_desc_destroy) primitive_desc_destroy = nullptr;
  decltype(&dnnl_primitive_desc_query_md) primitive_desc_query_md = nullptr;
  decltype(&dnnl_primitive_desc_query) primitive_desc_query = nullptr;
  decltype(&dnnl_memory_desc_get_size) memory_desc_get_size = nullptr;
  decltype(&dnnl_primitive_create) primitive_create = nullptr;
  decltype(&dnnl_primitive_destroy) primitive_destroy = nullptr;
  decltype(&dnnl_primitive_execute) primitive_execute = nullptr;
  decltype(&dnnl_memory_create) memory_create = nullptr;
  decltype(&dnnl_memory_set_data_handle) memory_set_data_handle = nullptr;
  decltype(&dnnl_stream_create) stream_create = nullptr;
  decltype(&dnnl_stream_wait) stream_wait = nullptr;
  void (*omp_set_num_threads)(int) = nullptr;
  dnnl_engine_t engine = nullptr;
};

// The library, opened on first use; Unavailable, saying what was tried,
// when it does not open.
absl::StatusOr<const OneDnn*> LoadOneDnn();

// One plain (strided, not blocked) array argument of a primitive.
struct DnnlArray {
  dnnl_data_type_t type;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // in elements

  // Bytes an element takes (the types Seam gives oneDNN: f32, bf16, u8).
  int64_t element_bytes() const { return type == dnnl_f32 ? 4 : type == dnnl_u8 ? 1 : 2; }
  int64_t element_count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

// A primitive kept for the life of the process (with the choices it made:
// Layout), and the scratch memory each execution of it needs.
struct Primitive {
  dnnl_primitive_desc_t desc = nullptr;
  dnnl_primitive_t primitive = nullptr;
  size_t scratch_bytes = 0;
  dnnl_memory_desc_t scratch_layout{};  // scratch_bytes of bytes (at least one)

  // The layout the primitive takes argument `arg` (DNNL_ARG_*) in.
  const dnnl_memory_desc_t& Layout(int arg) const;
  // The name of the implementation oneDNN chose ("brgconv:avx512_core").
  absl::string_view Implementation() const;
};

// The primitive of an operation descriptor (a backward one needs its
// forward's `hint`). Unimplemented where oneDNN has only its reference
// loops for the problem.
absl::StatusOr<Primitive> CreatePrimitive(const OneDnn& d, const_dnnl_op_desc_t desc,
                                          const_dnnl_primitive_desc_t hint = nullptr);
// `create` with oneDNN's OpenMP team at `team` threads: a primitive shares
// its work out among the threads there are when it is created, and runs so
// whatever the team is when it runs.
template <typename T>
absl::StatusOr<T> CreatedForTeam(const OneDnn& d, int team,
                                 absl::FunctionRef<absl::StatusOr<T>()> create) {
  if (d.omp_set_num_threads != nullptr) d.omp_set_num_threads(team);
  absl::StatusOr<T> made = create();
  if (d.omp_set_num_threads != nullptr) d.omp_set_num_threads(1);
  return made;
}
// Frees a primitive that is not kept (those in Cached live on).
void DestroyPrimitive(const OneDnn& d, Primitive& p);
// The primitive that copies an array from one layout into another.
absl::StatusOr<Primitive> CreateReorder(const OneDnn& d, const dnnl_memory_desc_t& from,
                                        const dnnl_memory_desc_t& to);

// A plain array, by its strides; or any layout a primitive prefers.
absl::StatusOr<dnnl_memory_desc_t> DescribePlain(const OneDnn& d, const DnnlArray& a);
absl::StatusOr<dnnl_memory_desc_t> DescribeAny(const OneDnn& d, dnnl_data_type_t type,
                                               const std::vector<int64_t>& dims);
std::string ArrayKey(const DnnlArray& a);

// One argument of an execution: its role, its layout, its memory.
struct DnnlArgument {
  int arg;
  const dnnl_memory_desc_t* layout;
  const void* data;
};

// Runs `primitive` on the calling thread, with scratch memory of the
// thread's own, on oneDNN's OpenMP team of `threads` (1: the caller alone).
absl::Status Execute(const OneDnn& d, const Primitive& primitive,
                     std::initializer_list<DnnlArgument> arguments, int threads = 1);

// What was made for `key` by `create`, made on the first call and kept for
// the life of the process with its failure (a model has a few dozen
// distinct problems; creating a primitive costs far more than running a
// small one, and a refused problem is asked once).
template <typename T>
absl::StatusOr<T> Cached(const std::string& key, absl::FunctionRef<absl::StatusOr<T>()> create) {
  static std::mutex mu;
  static auto* cache = new absl::flat_hash_map<std::string, absl::StatusOr<T>>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  return (*cache)[key] = create();
}

// c = a * b over stacks of matrices ([batch, m, k] x [batch, k, n] ->
// [batch, m, n], any strides), accumulated in f32 and rounded once into
// c's type. Primitives are created once per problem and kept; calls from
// several threads at once are safe.
absl::Status OneDnnMatmul(const DnnlArray& a, const void* a_data, const DnnlArray& b,
                          const void* b_data, const DnnlArray& c, void* c_data);

// Whether oneDNN multiplies bf16 matrices on this host at all (2.6 has no
// bf16 matmul without AVX-512): a one-element product, tried once.
bool OneDnnHasBf16Matmul();

}  // namespace seam::runtime
