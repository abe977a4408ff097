#include "seam/codegen/loop_nest.h"

namespace seam::codegen {

Expr Expr::Min(std::string a, std::string b) {
  Expr e;
  e.min = {std::move(a), std::move(b)};
  return e;
}

Loop Loop::Serial(std::string var, Expr begin, Expr end, std::string step) {
  Loop l;
  l.var = std::move(var);
  l.begin = std::move(begin);
  l.end = std::move(end);
  l.step = std::move(step);
  return l;
}

Loop Loop::Simd(std::string var, Expr begin, Expr end, std::vector<SimdReduction> reductions) {
  Loop l = Serial(std::move(var), std::move(begin), std::move(end));
  l.role = LoopRole::kSimd;
  l.reductions = std::move(reductions);
  return l;
}

Loop Loop::Tasks(std::string var, int64_t count, bool split) {
  Loop l = Serial(std::move(var), "0", std::to_string(count));
  l.role = LoopRole::kTasks;
  l.split = split;
  return l;
}

Loop Loop::GridThreads(std::string var, int64_t count) {
  Loop l = Serial(std::move(var), "0", std::to_string(count));
  l.role = LoopRole::kGridThreads;
  return l;
}

Loop Loop::Threads(std::string var, std::string begin, Expr end, std::string thread,
                   int64_t threads, int64_t vector) {
  Loop l = Serial(std::move(var), std::move(begin), std::move(end));
  l.role = LoopRole::kThreads;
  l.thread = std::move(thread);
  l.threads = threads;
  l.vector = vector;
  return l;
}

Compute Compute::At(size_t stage, std::vector<IndexPart> index, std::string linear,
                    std::vector<ComputeStep> steps) {
  Compute c;
  c.stage = static_cast<int>(stage);
  c.index = std::move(index);
  c.linear = std::move(linear);
  c.steps = std::move(steps);
  return c;
}

Compute Compute::Scalar(size_t stage, std::vector<ComputeStep> steps, bool loads_only) {
  Compute c = At(stage, {}, "", std::move(steps));
  c.loads_only = loads_only;
  return c;
}

}  // namespace seam::codegen
