// The opcode table against what implements it. Every opcode has
// interpreter semantics that a conformance case checks against XLA, or says
// why it has none; every elementwise op computes on every element type its
// shape rules accept, in the interpreter and, where the fusion planner would
// stitch it into a kernel, in generated code. A new op missing one of these
// fails here rather than falling back to the interpreter at run time.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/fusion/op_class.h"
#include "seam/text/parser.h"

namespace seam {
namespace {

// Interpreted ops no conformance case reaches (JAX does not emit them for
// one device, or only after XLA's passes), each with the eval test that
// checks their semantics instead.
const std::map<Opcode, std::string>& CheckedElsewhere() {
  static const auto* checked = new std::map<Opcode, std::string>{
      {Opcode::kAllReduce, "SingleDeviceCollectives.ReduceGatherScatterAndAllToAllKeepTheValue"},
      {Opcode::kAllGather, "SingleDeviceCollectives.ReduceGatherScatterAndAllToAllKeepTheValue"},
      {Opcode::kReduceScatter,
       "SingleDeviceCollectives.ReduceGatherScatterAndAllToAllKeepTheValue"},
      {Opcode::kAllToAll, "SingleDeviceCollectives.AllToAllOfSeveralOperandsIsATuple"},
      {Opcode::kCollectiveBroadcast,
       "SingleDeviceCollectives.ReduceGatherScatterAndAllToAllKeepTheValue"},
      {Opcode::kCollectivePermute,
       "SingleDeviceCollectives.CollectivePermuteReceivesOnlyFromItself"},
      {Opcode::kReplicaId, "SingleDeviceIds.ReplicaAndPartitionAreZero"},
      {Opcode::kPartitionId, "SingleDeviceIds.ReplicaAndPartitionAreZero"},
      {Opcode::kAfterAll, "Identities.TokensDependenciesDomainsAndCopies"},
      {Opcode::kAddDependency, "Identities.TokensDependenciesDomainsAndCopies"},
      {Opcode::kDomain, "Identities.TokensDependenciesDomainsAndCopies"},
      {Opcode::kCopy, "Identities.TokensDependenciesDomainsAndCopies"},
      {Opcode::kFusion, "Fusion.CallsItsComputation"},
      {Opcode::kGetDimensionSize, "GetDimensionSize.IsTheStaticSize"},
      {Opcode::kBatchNormTraining, "BatchNorm.TrainingNormalisesEachFeatureByItsOwnStatistics"},
      {Opcode::kBatchNormInference, "BatchNorm.InferenceScalesAndOffsetsTheGivenStatistics"},
      {Opcode::kBatchNormGrad, "BatchNorm.GradFollowsXlasFormula"},
      {Opcode::kRng, "Rng.UniformStaysInItsHalfOpenRange, Rng.NormalHasItsMeanAndDeviation"},
      {Opcode::kBitcast, "Bitcast.SameLayoutIsAReshape"},
      {Opcode::kMap, "Map.AppliesTheComputationElementwise"},
  };
  return *checked;
}

std::set<Opcode> OpcodesOf(const Module& module) {
  std::set<Opcode> ops;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) ops.insert(i->opcode());
  }
  return ops;
}

// The opcodes of every conformance case (module.hlo, or the corpus module
// module.path names).
std::set<Opcode> ConformanceOpcodes() {
  std::set<Opcode> ops;
  const std::filesystem::path root = SEAM_SOURCE_ROOT "/tests/conformance";
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    std::filesystem::path file = entry.path() / "module.hlo";
    if (!std::filesystem::exists(file)) {
      std::ifstream path_file(entry.path() / "module.path");
      std::string relative;
      if (!std::getline(path_file, relative)) continue;
      file = std::filesystem::path(SEAM_SOURCE_ROOT) /
             std::string(absl::StripAsciiWhitespace(relative));
    }
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(file.string());
    EXPECT_TRUE(modules.ok()) << modules.status();
    if (!modules.ok()) continue;
    for (const auto& m : *modules) ops.merge(OpcodesOf(*m));
  }
  return ops;
}

TEST(OpcodeCoverage, EveryOpcodeIsInterpretedOrSaysWhyNot) {
  const std::set<Opcode> conformance = ConformanceOpcodes();
  ASSERT_GT(conformance.size(), 50u);
  for (int k = 0; k < kOpcodeCount; ++k) {
    const auto op = static_cast<Opcode>(k);
    const absl::string_view why_not = NotInterpretedBecause(op);
    if (!why_not.empty()) {
      EXPECT_FALSE(conformance.contains(op))
          << OpcodeName(op) << " appears in a conformance case but is listed as not interpreted";
      continue;
    }
    EXPECT_TRUE(conformance.contains(op) || CheckedElsewhere().contains(op))
        << "'" << OpcodeName(op)
        << "' claims interpreter semantics, but no conformance case checks them against XLA: add "
           "one (scripts/conformance) or name the test that checks them in CheckedElsewhere";
  }
}

// Every element type the interpreter computes with: pred, integers and
// floats of whole bytes, complex. (s4 and u4 are held a byte each and
// moved, but no arithmetic on them is interpreted yet: the error says so.)
std::vector<DType> ComputedTypes() {
  std::vector<DType> types;
  for (int k = 0; k <= static_cast<int>(DType::kToken); ++k) {
    const auto t = static_cast<DType>(k);
    if (IsKernelType(t) || IsComplex(t)) types.push_back(t);
  }
  return types;
}

// `op` on operands of type `in` with result type `out` as a module, or
// nothing when the op's shape rules reject that combination. select takes a
// pred first; map adds `in`'s operands with a computation.
std::unique_ptr<Module> ElementwiseModule(Opcode op, DType in, DType out) {
  const std::string T = std::string(DTypeName(in));
  const int arity = OpcodeArity(op) == kVariadic ? 2 : OpcodeArity(op);
  std::string params, operands, attrs, computations;
  for (int k = 0; k < arity; ++k) {
    const std::string type = op == Opcode::kSelect && k == 0 ? "pred" : T;
    absl::StrAppend(&params, "  p", k, " = ", type, "[4] parameter(", k, ")\n");
    absl::StrAppend(&operands, k ? ", " : "", "p", k);
  }
  if (op == Opcode::kCompare) attrs = ", direction=LT";
  if (op == Opcode::kReducePrecision) attrs = ", exponent_bits=5, mantissa_bits=2";
  if (op == Opcode::kMap) {
    attrs = ", dimensions={0}, to_apply=f";
    computations = absl::StrCat("f {\n  a = ", T, "[] parameter(0)\n  b = ", T,
                                "[] parameter(1)\n  ROOT r = ", T, "[] maximum(a, b)\n}\n\n");
  }
  const std::string text = absl::StrCat("HloModule m\n\n", computations, "ENTRY e {\n", params,
                                        "  ROOT r = ", DTypeName(out), "[4] ", OpcodeName(op), "(",
                                        operands, ")", attrs, "\n}\n");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  return module.ok() ? std::move(*module) : nullptr;
}

TEST(OpcodeCoverage, EveryElementwiseOpComputesOnEveryTypeItAccepts) {
  int instances = 0;
  for (int k = 0; k < kOpcodeCount; ++k) {
    const auto op = static_cast<Opcode>(k);
    if (!IsElementwise(op) || !IsInterpretable(op)) continue;
    int accepted = 0;
    for (DType in : ComputedTypes()) {
      for (DType out : ComputedTypes()) {
        std::unique_ptr<Module> module = ElementwiseModule(op, in, out);
        if (module == nullptr) continue;
        ++accepted;
        const std::string what =
            absl::StrCat(OpcodeName(op), " ", DTypeName(in), " -> ", DTypeName(out));
        std::vector<Literal> arguments;
        for (const Instruction* p : module->entry()->parameters())
          arguments.emplace_back(p->shape());
        Evaluator evaluator;
        absl::StatusOr<Literal> value = evaluator.Run(*module, arguments);
        EXPECT_TRUE(value.ok()) << what << ": " << value.status();
        const Instruction& root = *module->entry()->root();
        if (fusion::IsFusible(fusion::ClassifyOp(root))) {
          absl::Status generated = codegen::CheckGenerated(root);
          EXPECT_TRUE(generated.ok())
              << what << " is stitched into kernels, which cannot compute it: " << generated;
        }
      }
    }
    EXPECT_GT(accepted, 0) << OpcodeName(op) << ": no element type accepted; fix the sweep";
    instances += accepted;
  }
  EXPECT_GT(instances, 300);
}

}  // namespace
}  // namespace seam
