// seam._core's compiler: a module compiled from HLO text
// (compiler::CompiledModule) as seam._core.Executable. Arrays cross as
// C-contiguous CPU buffers tagged with Seam's element type name; the
// Python side (seam/_api.py) maps numpy, JAX and torch dtypes to those
// names, so the one table of types lives there. Results are handed to
// numpy without a copy: each array's memory moves into a capsule that
// numpy frees.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings.h"
#include "seam/compiler/compiled_module.h"
#include "seam/ir/dtype.h"
#include "seam/ir/literal.h"

namespace seam::python {
namespace {

using namespace nb::literals;

using compiler::CompiledModule;
using compiler::CompileOptions;

// An argument as Python passes it: the array, and the element type it
// stands for (bf16 arrives as its uint16 bits).
using Argument = std::tuple<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>, std::string>;

// numpy's view of a Seam element type's storage: bf16 as its uint16 bits.
std::optional<nb::dlpack::dtype> StorageType(DType type) {
  using Code = nb::dlpack::dtype_code;
  auto of = [](Code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (type) {
    case DType::kPred:
      return of(Code::Bool, 8);
    case DType::kS8:
      return of(Code::Int, 8);
    case DType::kS16:
      return of(Code::Int, 16);
    case DType::kS32:
      return of(Code::Int, 32);
    case DType::kS64:
      return of(Code::Int, 64);
    case DType::kU8:
      return of(Code::UInt, 8);
    case DType::kU16:
    case DType::kBF16:
      return of(Code::UInt, 16);
    case DType::kU32:
      return of(Code::UInt, 32);
    case DType::kU64:
      return of(Code::UInt, 64);
    case DType::kF16:
      return of(Code::Float, 16);
    case DType::kF32:
      return of(Code::Float, 32);
    case DType::kF64:
      return of(Code::Float, 64);
    case DType::kC64:
      return of(Code::Complex, 64);
    case DType::kC128:
      return of(Code::Complex, 128);
    default:
      return std::nullopt;
  }
}

compiler::ArgumentView ToView(const Argument& argument, size_t index) {
  const auto& [array, type_name] = argument;
  const std::optional<DType> type = DTypeFromName(type_name);
  if (!type || !StorageType(*type)) {
    throw nb::value_error(
        absl::StrCat("argument ", index, ": Seam takes no arrays of element type '", type_name, "'")
            .c_str());
  }
  std::vector<int64_t> dims(array.ndim());
  for (size_t d = 0; d < array.ndim(); ++d) dims[d] = static_cast<int64_t>(array.shape(d));
  return {Shape::Array(*type, std::move(dims)), array.data(), array.nbytes()};
}

// An array result as (numpy array, Seam element type name), its memory
// handed over; a tuple as a tuple of those.
nb::object ToPython(Literal value) {
  if (value.shape().IsTuple()) {
    std::vector<Literal>& elements = value.mutable_tuple_elements();
    nb::list items;
    for (Literal& element : elements) items.append(ToPython(std::move(element)));
    return nb::tuple(items);
  }
  const DType type = value.shape().dtype();
  const std::optional<nb::dlpack::dtype> storage = StorageType(type);
  if (!storage) {
    throw std::runtime_error(
        absl::StrCat("a result of element type ", DTypeName(type), ", which Python cannot take"));
  }
  std::vector<size_t> shape(value.shape().dims().begin(), value.shape().dims().end());
  auto* owned = new ByteBuffer(std::move(value.mutable_bytes()));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<ByteBuffer*>(p); });
  nb::ndarray<nb::numpy> array(owned->data(), shape.size(), shape.data(), owner, nullptr, *storage);
  return nb::make_tuple(nb::cast(array), std::string(DTypeName(type)));
}

std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> Parameters(
    const CompiledModule& module) {
  std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> out;
  for (const Instruction* p : module.parameters()) {
    const Shape& shape = p->shape();
    out.emplace_back(p->name(), shape.IsArray() ? std::string(DTypeName(shape.dtype())) : "tuple",
                     shape.IsArray() ? shape.dims() : std::vector<int64_t>{});
  }
  return out;
}

nb::dict Stats(const CompiledModule& module) {
  const runtime::ExecutableStats s = module.stats();
  const compiler::CompileReport& r = module.report();
  nb::dict d;
  d["backend"] = module.options().backend;
  d["fusion"] = module.options().fusion;
  d["kernels"] = s.compiled_kernels;
  d["op_kernels"] = s.op_kernels;
  d["distinct_kernels"] = s.distinct_kernels;
  d["library_calls"] = s.blas_calls;
  d["epilogues"] = s.epilogues;
  d["aliases"] = s.aliases;
  d["interpreted"] = s.fallbacks;
  d["parse_seconds"] = r.parse_seconds;
  d["passes_seconds"] = r.passes_seconds;
  d["module_cache_hit"] = r.module_cache_hit;
  d["codegen_seconds"] = s.codegen_seconds;
  d["compile_seconds"] = s.compile_seconds;
  d["kernel_cache_hit"] = s.cache_hit;
  d["estimated_peak_bytes"] = s.estimated_peak_bytes;
  d["peak_bytes"] = s.peak_bytes;
  return d;
}

}  // namespace

void BindCompiler(nb::module_& m) {
  nb::class_<CompiledModule>(m, "Executable",
                             "A module compiled by Seam for one backend (made by seam.compile).")
      .def_prop_ro("parameters", &Parameters,
                   "The entry parameters as (name, element type, dimensions); 'tuple' and no "
                   "dimensions for a tuple parameter.")
      .def_prop_ro("hlo", &CompiledModule::OptimizedHlo, "The module after the graph passes.")
      .def_prop_ro("plan", &CompiledModule::PlanText,
                   "The fusion plan, as `seam plan` prints it ('' for the interpreter).")
      .def_prop_ro("stats", &Stats,
                   "Kernels, library calls, what the interpreter runs, compile times and memory.")
      .def(
          "run",
          [](CompiledModule& module, const std::vector<Argument>& arguments) {
            std::vector<compiler::ArgumentView> views;
            views.reserve(arguments.size());
            for (size_t i = 0; i < arguments.size(); ++i) views.push_back(ToView(arguments[i], i));
            absl::StatusOr<Literal> result;
            {
              nb::gil_scoped_release release;
              result = module.Run(views);
            }
            return ToPython(Value(std::move(result)));
          },
          "arguments"_a,
          "Runs the module on (array, element type name) pairs, one per parameter; returns "
          "(array, element type name) for an array result, a tuple of those for a tuple.");

  m.def(
      "compile",
      [](const std::string& text, const std::string& filename, const std::string& backend,
         const std::string& fusion, const std::string& passes, bool excess_precision) {
        CompileOptions options;
        options.backend = backend;
        options.fusion = fusion;
        options.passes = passes;
        options.excess_precision = excess_precision;
        absl::StatusOr<std::unique_ptr<CompiledModule>> compiled;
        {
          nb::gil_scoped_release release;
          compiled = CompiledModule::FromText(text, filename, options);
        }
        return Value(std::move(compiled));
      },
      "text"_a, "filename"_a, "backend"_a, "fusion"_a, "passes"_a, "excess_precision"_a,
      "Compiles one HLO module (text) for a backend; raises ValueError or RuntimeError with "
      "Seam's message when it cannot.");
}

}  // namespace seam::python
