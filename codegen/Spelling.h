//===- codegen/Spelling.h - CUDA spellings of types, literals, ops -*- C++ -*-===//
#pragma once

#include "ir/Node.h"

#include <llvm/ADT/ArrayRef.h>

#include <string>

namespace jitfuse::codegen {

/// The type a value of dtype T is computed in (halves compute in float).
std::string computeType(DType T);
/// Bytes of computeType(T).
unsigned computeBytes(DType T);
/// The type a value of dtype T is stored as in device memory.
std::string storageType(DType T);
/// Converts a stored element expression to its compute type. \p Pinned:
/// converted where the source puts it (jitfuse_device.cuh): bf16 by a PTX
/// move the compiler does not hoist, f16 by a volatile cvt. The caller
/// chooses per dtype (codegen Emitter::pinConversion).
std::string loadConvert(DType T, const std::string &Stored, bool Pinned = false);
/// Converts a compute value of dtype T to its storage type.
std::string storeConvert(DType T, const std::string &Value);
/// Converts a compute value of dtype From to the compute type of To,
/// rounding when To is a narrower float (explicit cast semantics).
std::string castValue(DType From, DType To, const std::string &Value);
/// Converts between compute types without rounding to half (operand
/// promotion inside a fused expression).
std::string promoteValue(DType From, DType To, const std::string &Value);
/// A literal of dtype T holding V (C locale, round-trip exact).
std::string literal(double V, DType T);
/// The expression for op O applied to Operands, computed in type T.
/// FastMath spells f32 sigmoid/silu with __expf and __fdividef
/// (CompileOptions::FastMath).
std::string opExpr(Op O, DType T, llvm::ArrayRef<std::string> Operands,
                   bool FastMath = false);
/// Reduction helpers: identity literal, combine functor, and the accumulate
/// expression.
std::string reduceIdentity(Op O, DType AccT);
std::string reduceFunctor(Op O);
/// A string made safe for a C identifier suffix.
std::string sanitizeIdent(llvm::StringRef S);
/// A string made safe inside a /* */ or // comment.
std::string sanitizeComment(llvm::StringRef S);

} // namespace jitfuse::codegen
