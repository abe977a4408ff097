#include "seam/runtime/host_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "seam/codegen/op_kernels.h"
#include "seam/eval/ops.h"
#include "seam/runtime/host_blas.h"
#include "seam/runtime/thread_pool.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {
namespace {

// Calls fn on each array of `value` (itself, or its tuple's, recursively).
template <typename Fn>
void ForEachArray(Literal& value, Fn&& fn) {
  if (value.shape().IsArray()) {
    fn(value);
    return;
  }
  for (Literal& element : value.mutable_tuple_elements()) ForEachArray(element, fn);
}

}  // namespace

HostStore::HostStore() { evaluator_.set_wide_accumulation(true); }  // as the kernels accumulate

absl::StatusOr<HostValue> HostStore::Take(HostValue& value, bool consume) {
  if (consume) return HostValue::Owned(std::move(*value.literal));
  return HostValue::Owned(CopyOf(*value.literal));
}

// The last holder of an owned value: its memory serves the next values.
void HostStore::Release(HostValue& value) {
  if (!Sole(value)) return;
  ForEachArray(*value.literal, [&](Literal& a) { pool_.Give(std::move(a.mutable_bytes())); });
}

// Built on first use and kept: an elided constant's data is filled once
// (deterministically, from its name), never once per run.
absl::StatusOr<HostValue> HostStore::Constant(const Instruction& i) {
  auto it = constants_.find(&i);
  if (it == constants_.end()) {
    SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(i, {}, evaluator_));
    constant_bytes_ += ShapeBytes(value.shape());
    it = constants_.emplace(&i, std::make_unique<Literal>(std::move(value))).first;
  }
  return HostValue::Borrowed(*it->second);
}

HostValue HostStore::Element(HostValue& tuple, int64_t index, bool move_out) {
  Literal& element = tuple.literal->mutable_tuple_elements()[index];
  if (move_out) return HostValue::Owned(std::move(element));
  return {std::shared_ptr<Literal>(tuple.literal, &element), false};
}

HostValue HostStore::Tuple(const Shape& shape, std::vector<HostValue> elements) {
  std::vector<Literal> moved;
  moved.reserve(elements.size());
  for (HostValue& e : elements) moved.push_back(std::move(*e.literal));
  return HostValue::Owned(Literal::Tuple(shape, std::move(moved)));
}

HostValue HostStore::Reshape(HostValue bytes, const Shape& shape) {
  return HostValue::Owned(Literal::FromBytes(shape, std::move(bytes.literal->mutable_bytes())));
}

// An array's bytes in pooled memory, copied on the pool.
Literal HostStore::CopyOfBytes(const Literal& array) {
  Literal copy = pool_.TakeLiteral(array.shape());
  const uint8_t* from = array.bytes().data();
  uint8_t* to = copy.mutable_bytes().data();
  ThreadPool::Global().ParallelFor(
      static_cast<int64_t>(array.bytes().size()), int64_t{1} << 20,
      [&](int64_t begin, int64_t end, int) { std::memcpy(to + begin, from + begin, end - begin); });
  return copy;
}

// In pooled memory, copied on the pool: memory the pool has touched
// already, where a fresh allocation faults in every page (GPT-2's outputs,
// a few MB of parameters and caches returned as they are: 1.9-3.0 ms per
// run).
Literal HostStore::CopyOf(const Literal& value) {
  if (!value.shape().IsTuple()) return CopyOfBytes(value);
  std::vector<Literal> elements;
  for (const Literal& element : value.tuple_elements()) elements.push_back(CopyOf(element));
  return Literal::Tuple(value.shape(), std::move(elements));
}

// An uninitialized value of `shape` (an array, or a tuple of arrays) in
// pooled memory.
Literal HostStore::TakeResult(const Shape& shape) {
  if (!shape.IsTuple()) return pool_.TakeLiteral(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(TakeResult(element));
  return Literal::Tuple(shape, std::move(elements));
}

void HostStore::Disown(Literal& result) {
  ForEachArray(result, [&](Literal& a) { pool_.Disown(a.bytes()); });
}

void HostStore::Recycle(Literal value) {
  ForEachArray(value, [&](Literal& a) { pool_.Adopt(std::move(a.mutable_bytes())); });
}

// A library call with its epilogue, which reads the epilogue's inputs
// beside the call's result.
absl::StatusOr<std::optional<HostValue>> HostStore::RunNative(const Step& step,
                                                              absl::Span<HostValue* const> reads) {
  if (!step.epilogue) return std::nullopt;
  const Instruction& call = *step.instruction;
  const size_t inputs_end = step.reads.size() - call.control_predecessors().size();
  absl::InlinedVector<void*, 8> inputs;
  for (size_t k = call.operand_count(); k < inputs_end; ++k) {
    inputs.push_back(reads[k]->literal->mutable_bytes().data());
  }
  const Shape& shape = step.writes[0]->shape();
  // Written over the call's own result where it has the same type.
  const bool in_place = shape.dtype() == call.shape().dtype();
  std::optional<Literal> separate;
  if (!in_place) separate.emplace(TakeResult(shape));
  void* const out = in_place ? nullptr : separate->mutable_bytes().data();
  const seam_cpu_epilogue function = launches_[step.launch].epilogue;
  auto apply = [&](void* result, int64_t begin, int64_t end, int64_t column_begin,
                   int64_t column_end) {
    absl::InlinedVector<void*, 8> buffers;
    buffers.push_back(result);
    buffers.insert(buffers.end(), inputs.begin(), inputs.end());
    buffers.push_back(in_place ? result : out);
    function(buffers.data(), begin, end, column_begin, column_end);
  };
  ResultEpilogue epilogue{apply};
  epilogue.columns = call.shape().rank() == 0 ? 1 : call.shape().dims().back();
  SEAM_ASSIGN_OR_RETURN(
      Literal value, RunHostBlas(pool_, call, *reads[0]->literal, *reads[1]->literal, &epilogue));
  if (!in_place) {
    pool_.Give(std::move(value.mutable_bytes()));
    return HostValue::Owned(*std::move(separate));
  }
  return HostValue::Owned(Literal::FromBytes(shape, std::move(value.mutable_bytes())));
}

absl::Status HostStore::Launch(const Step& step, SlotValues<HostValue>& values) {
  const codegen::KernelIr& ir = *step.ir;
  absl::InlinedVector<void*, 16> buffers;
  absl::InlinedVector<ByteBuffer, 4> scratch;
  for (size_t k = 0; k < ir.buffers.size(); ++k) {
    const codegen::KernelBuffer& b = ir.buffers[k];
    switch (b.storage) {
      case codegen::Storage::kInput: {
        HostValue* in = values.Find(step.buffer_slots[k]);
        if (in == nullptr) {
          return absl::InternalError(
              absl::StrCat(ir.name, ": input ", b.value->name(), " missing"));
        }
        buffers.push_back(in->literal->mutable_bytes().data());
        break;
      }
      case codegen::Storage::kOutput: {
        HostValue out = HostValue::Owned(pool_.TakeLiteral(b.value->shape()));
        buffers.push_back(out.literal->mutable_bytes().data());
        values.Set(step.buffer_slots[k], std::move(out));
        break;
      }
      default: {
        int64_t bytes = std::max<int64_t>(1, b.elements * std::max(1, DTypeByteSize(b.dtype)));
        scratch.push_back(pool_.Take(static_cast<size_t>(bytes)));
        buffers.push_back(scratch.back().data());
        break;
      }
    }
  }
  const LaunchEntry& launch = launches_[step.launch];
  const seam_pool* threads = ThreadPool::Global().c_interface();
  if (launch.profile >= 0) {
    auto start = std::chrono::steady_clock::now();
    launch.function(buffers.data(), threads);
    KernelProfile& p = profile_[launch.profile];
    p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++p.launches;
  } else {
    launch.function(buffers.data(), threads);
  }
  for (ByteBuffer& b : scratch) pool_.Give(std::move(b));
  return absl::OkStatus();
}

absl::StatusOr<HostValue> HostStore::LaunchOpKernel(const Step& step,
                                                    absl::Span<HostValue* const> reads,
                                                    std::optional<HostValue> in_place) {
  const Instruction& i = *step.instruction;
  const int in_place_operand = codegen::InPlaceOperand(i);
  absl::InlinedVector<void*, 8> buffers;
  for (int k = 0; k < i.operand_count(); ++k) {
    // The in-place operand's bytes have moved to `in_place` (the same
    // memory: the kernel sees its result is its operand and skips the copy).
    HostValue& operand = k == in_place_operand && in_place.has_value() ? *in_place : *reads[k];
    buffers.push_back(operand.literal->mutable_bytes().data());
  }
  Literal result = in_place.has_value() ? std::move(*in_place->literal) : TakeResult(i.shape());
  if (result.shape().IsTuple()) {
    for (Literal& e : result.mutable_tuple_elements()) buffers.push_back(e.mutable_bytes().data());
  } else {
    buffers.push_back(result.mutable_bytes().data());
  }
  launches_[step.launch].function(buffers.data(), ThreadPool::Global().c_interface());
  return HostValue::Owned(std::move(result));
}

}  // namespace seam::runtime
