// Random memory-intensive graphs: differential tests of the compiled paths
// and the gym's generator/random/<seed> benchmarks. Elementwise ops
// (cheap and expensive), broadcasts, reductions over
// any dimensions, reshapes, transposes, slices, pads, reverses,
// concatenates, selects, converts, iotas and dynamic slices, on random and
// irregular shapes, in f32 and bf16, with several outputs. Each graph is
// written as HLO text lines; many graphs make one module (one compile), and
// a failing graph becomes a module of its own to reproduce it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seam::gym {

struct RandomGraph {
  // Instruction lines; parameters are written `parameter(@k)`, k counting
  // from 0 within the graph, renumbered when graphs are put together.
  std::vector<std::string> lines;
  std::vector<std::string> outputs;       // instruction names
  std::vector<std::string> output_types;  // e.g. "f32[3,7]"
  int parameters = 0;
};

// A graph of about `ops` operations; names start with `prefix`.
RandomGraph MakeRandomGraph(uint64_t seed, const std::string& prefix, int ops);

// A module whose entry computes every graph and returns all their outputs
// in one tuple (graph by graph, in order).
std::string ModuleText(const std::vector<RandomGraph>& graphs, const std::string& name);

}  // namespace seam::gym
