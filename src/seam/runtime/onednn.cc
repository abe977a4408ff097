#include "seam/runtime/onednn.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "seam/runtime/scoped_environment.h"

namespace seam::runtime {
namespace {

template <typename F>
bool Bind(void* handle, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(handle, name));
  return function != nullptr;
}

absl::StatusOr<OneDnn> Open() {
  void* handle = nullptr;
  {
    // Read by libgomp when it loads with oneDNN: a team of one, waiting
    // passively, whatever the user's environment says.
    ScopedEnvironment environment;
    environment.Set("OMP_NUM_THREADS", "1");
    environment.Set("OMP_WAIT_POLICY", "passive");
    handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot open oneDNN (libdnnl.so.2): ", dlerror()));
  }
  OneDnn d;
  decltype(&dnnl_engine_create) engine_create = nullptr;
  decltype(&dnnl_set_max_cpu_isa) set_max_cpu_isa = nullptr;
  bool complete =
      Bind(handle, "dnnl_memory_desc_init_by_strides", d.memory_desc_init_by_strides) &&
      Bind(handle, "dnnl_memory_desc_init_by_tag", d.memory_desc_init_by_tag) &&
      Bind(handle, "dnnl_memory_desc_equal", d.memory_desc_equal) &&
      Bind(handle, "dnnl_matmul_desc_init", d.matmul_desc_init) &&
      Bind(handle, "dnnl_dilated_convolution_forward_desc_init", d.convolution_forward_desc_init) &&
      Bind(handle, "dnnl_dilated_convolution_backward_data_desc_init",
           d.convolution_backward_data_desc_init) &&
      Bind(handle, "dnnl_dilated_convolution_backward_weights_desc_init",
           d.convolution_backward_weights_desc_init) &&
      Bind(handle, "dnnl_reorder_primitive_desc_create", d.reorder_primitive_desc_create) &&
      Bind(handle, "dnnl_primitive_attr_create", d.primitive_attr_create) &&
      Bind(handle, "dnnl_primitive_attr_destroy", d.primitive_attr_destroy) &&
      Bind(handle, "dnnl_primitive_attr_set_scratchpad_mode",
           d.primitive_attr_set_scratchpad_mode) &&
      Bind(handle, "dnnl_primitive_desc_create", d.primitive_desc_create) &&
      Bind(handle, "dnnl_primitive_desc_destroy", d.primitive_desc_destroy) &&
      Bind(handle, "dnnl_primitive_desc_query_md", d.primitive_desc_query_md) &&
      Bind(handle, "dnnl_primitive_desc_query", d.primitive_desc_query) &&
      Bind(handle, "dnnl_memory_desc_get_size", d.memory_desc_get_size) &&
      Bind(handle, "dnnl_primitive_create", d.primitive_create) &&
      Bind(handle, "dnnl_primitive_destroy", d.primitive_destroy) &&
      Bind(handle, "dnnl_primitive_execute", d.primitive_execute) &&
      Bind(handle, "dnnl_memory_create", d.memory_create) &&
      Bind(handle, "dnnl_memory_set_data_handle", d.memory_set_data_handle) &&
      Bind(handle, "dnnl_stream_create", d.stream_create) &&
      Bind(handle, "dnnl_stream_wait", d.stream_wait) &&
      Bind(handle, "dnnl_engine_create", engine_create) &&
      Bind(handle, "dnnl_set_max_cpu_isa", set_max_cpu_isa);
  if (!complete) return absl::UnavailableError("the oneDNN found lacks functions of its 2.x C API");
  // libdnnl.so.2 needs libgomp, so this finds it (loaded now or before).
  Bind(handle, "omp_set_num_threads", d.omp_set_num_threads);
  // Before any primitive: the widest instructions the CPU has, not a
  // narrower set a user's ONEDNN_MAX_CPU_ISA would impose.
  set_max_cpu_isa(dnnl_cpu_isa_all);
  if (engine_create(&d.engine, dnnl_cpu, 0) != dnnl_success) {
    return absl::UnavailableError("oneDNN cannot create a CPU engine");
  }
  return d;
}

absl::Status Check(dnnl_status_t status, const char* what) {
  if (status == dnnl_success) return absl::OkStatus();
  // No implementation for this problem on this host (bf16 without
  // AVX-512, say): the caller goes on without oneDNN, as for its reference
  // loops.
  if (status == dnnl_unimplemented) {
    return absl::UnimplementedError(absl::StrCat("oneDNN: ", what, " found none on this host"));
  }
  return absl::InternalError(absl::StrCat("oneDNN: ", what, " failed (status ",
                                          static_cast<int>(status), ")"));
}

// The primitive of a primitive descriptor, which it keeps; or why not.
absl::StatusOr<Primitive> Realize(const OneDnn& d, dnnl_primitive_desc_t pd) {
  // oneDNN's reference loops are its last resort, hundreds of times slower
  // than OpenBLAS (a matmul writing a strided result: 2.7 s): refused, the
  // caller goes on without oneDNN.
  const char* implementation = nullptr;
  d.primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &implementation);
  if (implementation == nullptr || absl::string_view(implementation).substr(0, 3) == "ref") {
    d.primitive_desc_destroy(pd);
    return absl::UnimplementedError(absl::StrCat("oneDNN has only its reference loops (",
                                                 implementation ? implementation : "?",
                                                 ") for this problem"));
  }
  Primitive p;
  p.desc = pd;
  p.scratch_bytes = d.memory_desc_get_size(d.primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
  const int64_t scratch_dims[1] = {static_cast<int64_t>(std::max<size_t>(1, p.scratch_bytes))};
  dnnl_status_t created =
      d.memory_desc_init_by_tag(&p.scratch_layout, 1, scratch_dims, dnnl_u8, dnnl_a);
  if (created == dnnl_success) created = d.primitive_create(&p.primitive, pd);
  if (absl::Status s = Check(created, "creating a primitive"); !s.ok()) {
    d.primitive_desc_destroy(pd);
    return s;
  }
  return p;
}

// Attributes every primitive gets: scratch memory comes with each call,
// so that calls may overlap.
absl::StatusOr<dnnl_primitive_attr_t> UserScratchAttributes(const OneDnn& d) {
  dnnl_primitive_attr_t attr = nullptr;
  if (absl::Status s = Check(d.primitive_attr_create(&attr), "creating attributes"); !s.ok()) {
    return s;
  }
  d.primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  return attr;
}

// The calling thread's stream, and its OpenMP team of one.
absl::StatusOr<dnnl_stream_t> ThreadStream(const OneDnn& d) {
  thread_local dnnl_stream_t stream = nullptr;
  if (stream != nullptr) return stream;
  if (d.omp_set_num_threads != nullptr) d.omp_set_num_threads(1);
  if (absl::Status s = Check(d.stream_create(&stream, d.engine, dnnl_stream_default_flags),
                             "creating a stream");
      !s.ok()) {
    return s;
  }
  return stream;
}

// The calling thread's memory object for argument `arg` of `primitive` in
// layout `md`, pointed at `data`. Made once per thread, primitive, argument
// and layout, and kept for the process like the primitives themselves;
// later calls only re-point it. (Made and destroyed per call, the four
// objects of a 3 us bf16 [16,16] product took about a third of it.)
absl::StatusOr<dnnl_memory_t> ThreadMemory(const OneDnn& d, dnnl_primitive_t primitive, int arg,
                                           const dnnl_memory_desc_t& md, const void* data) {
  struct Made {
    dnnl_memory_desc_t md;
    dnnl_memory_t memory;
  };
  thread_local absl::flat_hash_map<std::pair<dnnl_primitive_t, int>, std::vector<Made>> made;
  std::vector<Made>& layouts = made[{primitive, arg}];
  void* handle = const_cast<void*>(data);
  for (const Made& m : layouts) {
    if (d.memory_desc_equal(&m.md, &md) == 0) continue;
    if (absl::Status s = Check(d.memory_set_data_handle(m.memory, handle), "pointing an array");
        !s.ok()) {
      return s;
    }
    return m.memory;
  }
  dnnl_memory_t memory = nullptr;
  if (absl::Status s = Check(d.memory_create(&memory, &md, d.engine, handle), "wrapping an array");
      !s.ok()) {
    return s;
  }
  layouts.push_back({md, memory});
  return memory;
}

}  // namespace

absl::StatusOr<const OneDnn*> LoadOneDnn() {
  static const absl::StatusOr<OneDnn> library = Open();
  if (!library.ok()) return library.status();
  return &*library;
}

const dnnl_memory_desc_t& Primitive::Layout(int arg) const {
  const OneDnn& d = **LoadOneDnn();  // a primitive exists: the library is open
  return *d.primitive_desc_query_md(desc, dnnl_query_exec_arg_md, arg);
}

absl::string_view Primitive::Implementation() const {
  const OneDnn& d = **LoadOneDnn();
  const char* implementation = nullptr;
  d.primitive_desc_query(desc, dnnl_query_impl_info_str, 0, &implementation);
  return implementation == nullptr ? "?" : implementation;
}

absl::StatusOr<Primitive> CreatePrimitive(const OneDnn& d, const_dnnl_op_desc_t desc,
                                          const_dnnl_primitive_desc_t hint) {
  absl::StatusOr<dnnl_primitive_attr_t> attr = UserScratchAttributes(d);
  if (!attr.ok()) return attr.status();
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t created = d.primitive_desc_create(&pd, desc, *attr, d.engine, hint);
  d.primitive_attr_destroy(*attr);
  if (absl::Status s = Check(created, "choosing an implementation"); !s.ok()) return s;
  return Realize(d, pd);
}

void DestroyPrimitive(const OneDnn& d, Primitive& p) {
  if (p.primitive != nullptr) d.primitive_destroy(p.primitive);
  if (p.desc != nullptr) d.primitive_desc_destroy(p.desc);
  p = Primitive();
}

absl::StatusOr<Primitive> CreateReorder(const OneDnn& d, const dnnl_memory_desc_t& from,
                                        const dnnl_memory_desc_t& to) {
  absl::StatusOr<dnnl_primitive_attr_t> attr = UserScratchAttributes(d);
  if (!attr.ok()) return attr.status();
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t created =
      d.reorder_primitive_desc_create(&pd, &from, d.engine, &to, d.engine, *attr);
  d.primitive_attr_destroy(*attr);
  if (absl::Status s = Check(created, "choosing a reorder"); !s.ok()) return s;
  return Realize(d, pd);
}

absl::StatusOr<dnnl_memory_desc_t> DescribePlain(const OneDnn& d, const DnnlArray& a) {
  dnnl_memory_desc_t md;
  absl::Status made = Check(
      d.memory_desc_init_by_strides(&md, static_cast<int>(a.dims.size()), a.dims.data(), a.type,
                                    a.strides.data()),
      "describing an array");
  if (!made.ok()) return made;
  return md;
}

absl::StatusOr<dnnl_memory_desc_t> DescribeAny(const OneDnn& d, dnnl_data_type_t type,
                                               const std::vector<int64_t>& dims) {
  dnnl_memory_desc_t md;
  absl::Status made = Check(d.memory_desc_init_by_tag(&md, static_cast<int>(dims.size()),
                                                      dims.data(), type, dnnl_format_tag_any),
                            "describing an array of any layout");
  if (!made.ok()) return made;
  return md;
}

std::string ArrayKey(const DnnlArray& a) {
  return absl::StrCat(static_cast<int>(a.type), ":", absl::StrJoin(a.dims, ","), "/",
                      absl::StrJoin(a.strides, ","));
}

absl::Status Execute(const OneDnn& d, const Primitive& primitive,
                     std::initializer_list<DnnlArgument> arguments, int threads) {
  absl::StatusOr<dnnl_stream_t> stream = ThreadStream(d);
  if (!stream.ok()) return stream.status();
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < primitive.scratch_bytes) scratch.resize(primitive.scratch_bytes);
  absl::InlinedVector<dnnl_exec_arg_t, 8> args;
  auto wrap = [&](int arg, const dnnl_memory_desc_t& md, const void* data) -> absl::Status {
    absl::StatusOr<dnnl_memory_t> memory = ThreadMemory(d, primitive.primitive, arg, md, data);
    if (!memory.ok()) return memory.status();
    args.push_back({arg, *memory});
    return absl::OkStatus();
  };
  for (const DnnlArgument& a : arguments) {
    if (absl::Status s = wrap(a.arg, *a.layout, a.data); !s.ok()) return s;
  }
  if (absl::Status s = wrap(DNNL_ARG_SCRATCHPAD, primitive.scratch_layout, scratch.data());
      !s.ok()) {
    return s;
  }
  // The team size is the calling thread's OpenMP setting: one, unless this
  // call may use more.
  if (threads > 1 && d.omp_set_num_threads != nullptr) d.omp_set_num_threads(threads);
  absl::Status ran = Check(d.primitive_execute(primitive.primitive, *stream,
                                               static_cast<int>(args.size()), args.data()),
                           "running a primitive");
  if (ran.ok()) ran = Check(d.stream_wait(*stream), "waiting for a primitive");
  if (threads > 1 && d.omp_set_num_threads != nullptr) d.omp_set_num_threads(1);
  return ran;
}

absl::Status OneDnnMatmul(const DnnlArray& a, const void* a_data, const DnnlArray& b,
                          const void* b_data, const DnnlArray& c, void* c_data) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const OneDnn& d = **library;
  // The problem's primitive and layouts, looked up per thread by the
  // arrays' numbers: a tiny product (BERT's bf16 [16,16]) runs in about a
  // microsecond, and describing its arrays, spelling its key and taking
  // the shared cache's lock cost as much again.
  struct Prepared {
    Primitive matmul;
    std::array<dnnl_memory_desc_t, 3> layouts;
  };
  absl::InlinedVector<int64_t, 32> key;
  for (const DnnlArray* array : {&a, &b, &c}) {
    key.push_back(array->type);
    key.push_back(static_cast<int64_t>(array->dims.size()));
    key.insert(key.end(), array->dims.begin(), array->dims.end());
    key.insert(key.end(), array->strides.begin(), array->strides.end());
  }
  thread_local absl::flat_hash_map<absl::InlinedVector<int64_t, 32>, absl::StatusOr<Prepared>>
      prepared;
  auto it = prepared.find(key);
  if (it == prepared.end()) {
    auto prepare = [&]() -> absl::StatusOr<Prepared> {
      absl::StatusOr<dnnl_memory_desc_t> a_md = DescribePlain(d, a), b_md = DescribePlain(d, b),
                                         c_md = DescribePlain(d, c);
      if (!a_md.ok() || !b_md.ok() || !c_md.ok()) {
        return absl::InvalidArgumentError("oneDNN: a matmul operand it cannot describe");
      }
      absl::StatusOr<Primitive> matmul = Cached<Primitive>(
          absl::StrCat("matmul ", ArrayKey(a), " ", ArrayKey(b), " ", ArrayKey(c)),
          [&]() -> absl::StatusOr<Primitive> {
            dnnl_matmul_desc_t desc;
            if (absl::Status s = Check(d.matmul_desc_init(&desc, &*a_md, &*b_md, nullptr, &*c_md),
                                       "describing a matmul");
                !s.ok()) {
              return s;
            }
            return CreatePrimitive(d, &desc);
          });
      if (!matmul.ok()) return matmul.status();
      return Prepared{*matmul, {*a_md, *b_md, *c_md}};
    };
    it = prepared.emplace(key, prepare()).first;
  }
  if (!it->second.ok()) return it->second.status();
  const Prepared& p = *it->second;
  return Execute(d, p.matmul,
                 {{DNNL_ARG_SRC, &p.layouts[0], a_data},
                  {DNNL_ARG_WEIGHTS, &p.layouts[1], b_data},
                  {DNNL_ARG_DST, &p.layouts[2], c_data}});
}

bool OneDnnHasBf16Matmul() {
  static const bool has = [] {
    const uint16_t one = 0x3f80;
    uint16_t product = 0;
    const DnnlArray scalar{dnnl_bf16, {1, 1, 1}, {1, 1, 1}};
    return OneDnnMatmul(scalar, &one, scalar, &one, scalar, &product).ok() && product == one;
  }();
  return has;
}

}  // namespace seam::runtime
