// reduce, reduce-window and select-and-scatter. Elements are combined in
// row-major order of the reduced (or window) index space, starting from the
// init value, with the result of every step rounded to the element type, as a
// literal reading of HLO defines it.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"
#include "seam/eval/reducer.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Maps input linear indices to output linear indices of a reduce.
struct ReduceIndexing {
  std::vector<int64_t> kept_dims;     // input dims that survive, in order
  std::vector<int64_t> reduced_dims;  // input dims reduced, in order
  std::vector<int64_t> out_strides;   // per kept dim
};

ReduceIndexing MakeIndexing(const Shape& input, const IntList& reduced) {
  ReduceIndexing ix;
  std::vector<bool> is_reduced(input.rank(), false);
  for (int64_t d : reduced) is_reduced[d] = true;
  std::vector<int64_t> kept_sizes;
  for (int d = 0; d < input.rank(); ++d) {
    (is_reduced[d] ? ix.reduced_dims : ix.kept_dims).push_back(d);
    if (!is_reduced[d]) kept_sizes.push_back(input.dim(d));
  }
  ix.out_strides = RowMajorStrides(kept_sizes);
  return ix;
}

const Shape& ElementShape(const Shape& shape, size_t i) {
  return shape.IsTuple() ? shape.tuple_shapes()[i] : shape;
}

// FastReduce with accumulators wider than the element type (bf16 and f16 in
// f32, f32 in f64), rounding once at the end.
template <typename T, typename Accumulator>
Literal WideReduce(const Shape& out_shape, const Literal& input, const Literal& init,
                   const ReduceIndexing& ix, Opcode op) {
  using S = typename T::Storage;
  Literal out(out_shape);
  std::vector<Accumulator> acc(static_cast<size_t>(out.element_count()),
                               T::Load(init.data<S>()[0]));
  const S* src = input.data<S>();
  ForEachIndex(input.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t o = 0;
    for (size_t k = 0; k < ix.kept_dims.size(); ++k) o += index[ix.kept_dims[k]] * ix.out_strides[k];
    acc[o] = ApplyBinary(op, acc[o], static_cast<Accumulator>(T::Load(src[linear])));
  });
  S* dst = out.mutable_data<S>();
  for (int64_t i = 0; i < out.element_count(); ++i) {
    dst[i] = T::Store(static_cast<typename T::Compute>(acc[i]));
  }
  return out;
}

// One input, a recognised reducer: accumulate in place in a typed loop.
// With `wide`, 16-bit floats accumulate in f32 and f32 in f64, rounding once.
absl::StatusOr<Literal> FastReduce(const Shape& out_shape, const Literal& input,
                                   const Literal& init, const ReduceIndexing& ix, Opcode op,
                                   bool wide) {
  return DispatchDType(input.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    using S = typename T::Storage;
    if constexpr (std::is_same_v<typename T::Compute, float>) {
      if (wide) {
        using Accumulator = std::conditional_t<std::is_same_v<S, float>, double, float>;
        return WideReduce<T, Accumulator>(out_shape, input, init, ix, op);
      }
    }
    Literal out(out_shape);
    S* acc = out.mutable_data<S>();
    S start = init.data<S>()[0];
    for (int64_t i = 0; i < out.element_count(); ++i) acc[i] = start;
    const S* src = input.data<S>();
    ForEachIndex(input.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
      int64_t o = 0;
      for (size_t k = 0; k < ix.kept_dims.size(); ++k) o += index[ix.kept_dims[k]] * ix.out_strides[k];
      acc[o] = T::Store(ApplyBinary(op, T::Load(acc[o]), T::Load(src[linear])));
    });
    return out;
  });
}

// Any number of inputs, any reducer: one interpreter call per element.
absl::StatusOr<Literal> GeneralReduce(const Instruction& instruction, OperandValues operands,
                                      const ReduceIndexing& ix, Evaluator& evaluator) {
  size_t n = operands.size() / 2;
  const Shape& in_shape = operands[0]->shape();
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) types.push_back(operands[i]->shape().dtype());
  ScalarCaller caller(**instruction.attrs().to_apply, evaluator, types);
  Literal out(instruction.shape());
  std::vector<Literal*> results;
  for (size_t i = 0; i < n; ++i) {
    results.push_back(instruction.shape().IsTuple() ? &out.mutable_tuple_elements()[i] : &out);
  }
  std::vector<int64_t> in_strides = RowMajorStrides(in_shape.dims());
  std::vector<int64_t> reduced_sizes, kept_sizes;
  for (int64_t d : ix.reduced_dims) reduced_sizes.push_back(in_shape.dim(static_cast<int>(d)));
  for (int64_t d : ix.kept_dims) kept_sizes.push_back(in_shape.dim(static_cast<int>(d)));
  absl::Status status;
  ForEachIndex(kept_sizes, [&](absl::Span<const int64_t> kept, int64_t out_linear) {
    if (!status.ok()) return;
    int64_t base = 0;
    for (size_t k = 0; k < kept.size(); ++k) base += kept[k] * in_strides[ix.kept_dims[k]];
    for (size_t i = 0; i < n; ++i) caller.accumulators()[i] = *operands[n + i];
    ForEachIndex(reduced_sizes, [&](absl::Span<const int64_t> red, int64_t) {
      if (!status.ok()) return;
      int64_t at = base;
      for (size_t k = 0; k < red.size(); ++k) at += red[k] * in_strides[ix.reduced_dims[k]];
      for (size_t i = 0; i < n; ++i) {
        int64_t size = DTypeByteSize(types[i]);
        std::memcpy(caller.values()[i].mutable_bytes().data(),
                    operands[i]->bytes().data() + at * size, size);
      }
      status = caller.Apply();
    });
    for (size_t i = 0; i < n; ++i) {
      int64_t size = DTypeByteSize(types[i]);
      std::memcpy(results[i]->mutable_bytes().data() + out_linear * size,
                  caller.accumulators()[i].bytes().data(), size);
    }
  });
  if (!status.ok()) return status;
  return out;
}

// The inputs and inits of a reduce or reduce-window (inputs, then inits) as
// its reducer takes them: XLA lets a reducer's float types differ from
// theirs (checking shapes ignoring floating-point precision), and such
// values reach it converted. `converted` keeps the new ones alive.
absl::StatusOr<std::vector<const Literal*>> AsReducerTakes(const Computation& reducer,
                                                           OperandValues operands,
                                                           std::vector<Literal>& converted) {
  const size_t n = operands.size() / 2;
  std::vector<const Literal*> taken(operands.begin(), operands.end());
  converted.reserve(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) {
    // Input k is the reducer's parameter n + k; init k its parameter k.
    const int parameter = static_cast<int>(k < n ? n + k : k - n);
    const DType want = reducer.parameter(parameter)->shape().dtype();
    if (operands[k]->shape().dtype() == want) continue;
    SEAM_ASSIGN_OR_RETURN(Literal value, ConvertElements(*operands[k], want));
    converted.push_back(std::move(value));
    taken[k] = &converted.back();
  }
  return taken;
}

absl::StatusOr<Literal> Reduce(const Instruction& instruction, OperandValues given,
                               Evaluator& evaluator) {
  std::vector<Literal> converted;
  SEAM_ASSIGN_OR_RETURN(std::vector<const Literal*> taken,
                        AsReducerTakes(**instruction.attrs().to_apply, given, converted));
  OperandValues operands(taken);
  const IntList& reduced = instruction.attrs().dimensions.value_or(IntList{});
  ReduceIndexing ix = MakeIndexing(operands[0]->shape(), reduced);
  const Computation& reducer = **instruction.attrs().to_apply;
  std::optional<Opcode> op = AsBinaryReducer(reducer);
  if (operands.size() == 2 && op.has_value() &&
      reducer.root()->shape().dtype() == operands[0]->shape().dtype()) {
    return FastReduce(ElementShape(instruction.shape(), 0), *operands[0], *operands[1], ix, *op,
                      evaluator.wide_accumulation());
  }
  return GeneralReduce(instruction, operands, ix, evaluator);
}

// The input positions a window at output index `out` covers, per dimension:
// position = out * stride + w * window_dilation - pad_low, in the base-dilated
// input; positions outside it or in dilation holes are skipped.
template <typename Fn>
void ForEachWindowElement(const Window& window, const Shape& input,
                          absl::Span<const int64_t> out, Fn fn) {
  int rank = input.rank();
  std::vector<int64_t> sizes(rank);
  for (int d = 0; d < rank; ++d) sizes[d] = window.dims[d].size;
  std::vector<int64_t> in_index(rank);
  ForEachIndex(sizes, [&](absl::Span<const int64_t> w, int64_t) {
    for (int d = 0; d < rank; ++d) {
      const WindowDim& wd = window.dims[d];
      int64_t p = out[d] * wd.stride + w[d] * wd.rhs_dilation - wd.pad_low;
      if (p < 0 || p % wd.lhs_dilation != 0) return;
      p /= wd.lhs_dilation;
      if (p >= input.dim(d)) return;
      in_index[d] = p;
    }
    fn(absl::Span<const int64_t>(in_index));
  });
}

// One input, a recognised reducer (pooling): a typed loop.
absl::StatusOr<Literal> FastReduceWindow(const Shape& out_shape, const Window& window,
                                         const Literal& input, const Literal& init, Opcode op) {
  std::vector<int64_t> in_strides = RowMajorStrides(input.shape().dims());
  return DispatchDType(input.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    using S = typename T::Storage;
    Literal out(out_shape);
    S* dst = out.mutable_data<S>();
    const S* src = input.data<S>();
    ForEachIndex(out_shape.dims(), [&](absl::Span<const int64_t> o, int64_t out_linear) {
      S acc = init.data<S>()[0];
      ForEachWindowElement(window, input.shape(), o, [&](absl::Span<const int64_t> in_index) {
        acc = T::Store(ApplyBinary(op, T::Load(acc), T::Load(src[LinearIndex(in_index, in_strides)])));
      });
      dst[out_linear] = acc;
    });
    return out;
  });
}

absl::StatusOr<Literal> ReduceWindow(const Instruction& instruction, OperandValues given,
                                     Evaluator& evaluator) {
  std::vector<Literal> converted;
  SEAM_ASSIGN_OR_RETURN(std::vector<const Literal*> taken,
                        AsReducerTakes(**instruction.attrs().to_apply, given, converted));
  OperandValues operands(taken);
  size_t n = operands.size() / 2;
  const Window& window = *instruction.attrs().window;
  const Shape& in_shape = operands[0]->shape();
  const Computation& reducer = **instruction.attrs().to_apply;
  std::optional<Opcode> op = AsBinaryReducer(reducer);
  if (n == 1 && op.has_value() && reducer.root()->shape().dtype() == in_shape.dtype()) {
    return FastReduceWindow(ElementShape(instruction.shape(), 0), window, *operands[0],
                            *operands[1], *op);
  }
  std::vector<int64_t> in_strides = RowMajorStrides(in_shape.dims());
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) types.push_back(operands[i]->shape().dtype());
  ScalarCaller caller(**instruction.attrs().to_apply, evaluator, types);
  Literal out(instruction.shape());
  const Shape& out_shape = ElementShape(instruction.shape(), 0);
  absl::Status status;
  ForEachIndex(out_shape.dims(), [&](absl::Span<const int64_t> o, int64_t out_linear) {
    if (!status.ok()) return;
    for (size_t i = 0; i < n; ++i) caller.accumulators()[i] = *operands[n + i];
    ForEachWindowElement(window, in_shape, o, [&](absl::Span<const int64_t> in_index) {
      if (!status.ok()) return;
      int64_t at = LinearIndex(in_index, in_strides);
      for (size_t i = 0; i < n; ++i) {
        int64_t size = DTypeByteSize(types[i]);
        std::memcpy(caller.values()[i].mutable_bytes().data(),
                    operands[i]->bytes().data() + at * size, size);
      }
      status = caller.Apply();
    });
    for (size_t i = 0; i < n; ++i) {
      Literal& result = instruction.shape().IsTuple() ? out.mutable_tuple_elements()[i] : out;
      int64_t size = DTypeByteSize(types[i]);
      std::memcpy(result.mutable_bytes().data() + out_linear * size,
                  caller.accumulators()[i].bytes().data(), size);
    }
  });
  if (!status.ok()) return status;
  return out;
}

// select-and-scatter(operand, source, init): for each window (one per source
// element) pick the operand element `select` prefers, then combine the source
// value into that position of an init-filled output with `scatter`.
absl::StatusOr<Literal> SelectAndScatter(const Instruction& instruction, OperandValues operands,
                                         Evaluator& evaluator) {
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  const Window& window = *instruction.attrs().window;
  DType t = operand.shape().dtype();
  int64_t size = DTypeByteSize(t);
  std::vector<int64_t> strides = RowMajorStrides(operand.shape().dims());
  ScalarCaller select(**instruction.attrs().select, evaluator, {t});
  ScalarCaller scatter(**instruction.attrs().scatter, evaluator, {t});
  Literal out(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::memcpy(out.mutable_bytes().data() + i * size, init.bytes().data(), size);
  }
  absl::Status status;
  ForEachIndex(source.shape().dims(), [&](absl::Span<const int64_t> s, int64_t s_linear) {
    if (!status.ok()) return;
    int64_t chosen = -1;
    ForEachWindowElement(window, operand.shape(), s, [&](absl::Span<const int64_t> in_index) {
      if (!status.ok()) return;
      int64_t at = LinearIndex(in_index, strides);
      if (chosen < 0) {
        chosen = at;
        return;
      }
      // select(current, candidate) true keeps the current element.
      std::memcpy(select.accumulators()[0].mutable_bytes().data(),
                  operand.bytes().data() + chosen * size, size);
      std::memcpy(select.values()[0].mutable_bytes().data(), operand.bytes().data() + at * size,
                  size);
      absl::StatusOr<Literal> keep_current = select.Evaluate();
      if (!keep_current.ok()) {
        status = keep_current.status();
      } else if (!keep_current->GetBits(0)) {
        chosen = at;
      }
    });
    if (chosen < 0) return;
    std::memcpy(scatter.accumulators()[0].mutable_bytes().data(),
                out.bytes().data() + chosen * size, size);
    std::memcpy(scatter.values()[0].mutable_bytes().data(),
                source.bytes().data() + s_linear * size, size);
    status = scatter.Apply();
    if (!status.ok()) return;
    std::memcpy(out.mutable_bytes().data() + chosen * size,
                scatter.accumulators()[0].bytes().data(), size);
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalReduction(const Instruction& instruction, OperandValues operands,
                                      Evaluator& evaluator) {
  switch (instruction.opcode()) {
    case Opcode::kReduce: return Reduce(instruction, operands, evaluator);
    case Opcode::kReduceWindow: return ReduceWindow(instruction, operands, evaluator);
    case Opcode::kSelectAndScatter: return SelectAndScatter(instruction, operands, evaluator);
    default:
      return absl::UnimplementedError(absl::StrCat("the interpreter does not support '",
                                                   OpcodeName(instruction.opcode()), "'"));
  }
}

}  // namespace seam
