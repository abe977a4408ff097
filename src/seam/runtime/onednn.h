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
#include <vector>

#include "absl/status/statusor.h"

namespace seam::runtime {

struct OneDnn {
  decltype(&dnnl_memory_desc_init_by_strides) memory_desc_init_by_strides = nullptr;
  decltype(&dnnl_matmul_desc_init) matmul_desc_init = nullptr;
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
  decltype(&dnnl_memory_destroy) memory_destroy = nullptr;
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
};

// c = a * b over stacks of matrices ([batch, m, k] x [batch, k, n] ->
// [batch, m, n], any strides), accumulated in f32 and rounded once into
// c's type. Primitives are created once per problem and kept; calls from
// several threads at once are safe.
absl::Status OneDnnMatmul(const DnnlArray& a, const void* a_data, const DnnlArray& b,
                          const void* b_data, const DnnlArray& c, void* c_data);

}  // namespace seam::runtime
