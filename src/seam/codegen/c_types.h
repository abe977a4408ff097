// How element types appear in generated C-like code: the type a buffer
// stores and the type values are computed in (bf16 and f16 are stored as
// their 16 bits and computed in float, rounded back after every op, as the
// interpreter does).
#pragma once

#include <string>

#include "seam/codegen/vector_form.h"
#include "seam/ir/dtype.h"
#include "seam/ir/literal.h"

namespace seam::codegen {

// Pred is stored as uint8_t (0 or 1, as literals hold it): the vectorizer
// has no vector type for bool in memory, and a loop loading one stays scalar.
std::string StorageType(DType t);  // e.g. "uint16_t" for bf16, "uint8_t" for pred
std::string ComputeType(DType t);  // e.g. "float" for bf16, "bool" for pred
// The element type of a per-thread tile buffer: compute values, pred as
// stored (no std::vector<bool>).
std::string TileType(DType t);

bool IsFloatType(DType t);
bool IsHalfType(DType t);  // bf16 or f16

// A stored element as a compute value, and back.
std::string LoadExpr(DType t, const std::string& stored);
std::string StoreExpr(DType t, const std::string& value);
// `value` (a compute value of type t) rounded to t's precision: the
// identity except for bf16 and f16.
std::string RoundExpr(DType t, const std::string& value);
// The vector form of LoadExpr, StoreExpr and RoundExpr on t: f16's
// conversions are calls the vectorizer was not measured beside.
VectorForm ConversionForm(DType t);

// A literal of type t holding `value` (NaN and infinities spelled out);
// exact for every float type.
std::string FloatLiteral(DType t, double value);
// Element i of `literal` as a compute-type literal, exact for every type.
std::string ElementLiteral(const Literal& literal, int64_t i);
// The vector form of a literal of type t (an integer one is a cast).
VectorForm LiteralForm(DType t);

}  // namespace seam::codegen
