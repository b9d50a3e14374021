//===- reference/ErrorBound.h - forward error bounds ------------*- C++ -*-===//
//
// A per-element absolute error bound for every value the reference
// interpreter computes: how far a *correct* GPU execution (fused or unfused,
// f32 intermediates, CUDA math library, any partition's materializations)
// may be from the fp64 reference. First-order running error analysis: inputs
// are exact, every rounding and every library call adds its documented error,
// and operand errors propagate through each op's derivative. A comparison or
// rounding step whose outcome the operand errors can flip makes the element
// *unconstrained* (+inf), and everything depending on it inherits that.
// The rules are listed in reference/ErrorBound.cpp; docs/NUMERICS.md ("Error
// bounds") explains the model and how compareTensors uses it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "reference/Interpreter.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace jitfuse {

/// The reference outputs with an error bound per element.
struct ReferenceResult {
  /// Exactly what interpret(G, B) returns: each output rounded to its dtype.
  std::map<std::string, HostTensor> Values;
  /// Per output, an f64 tensor shaped like the output: |got - ref| may be up
  /// to this for a correct GPU result; +inf marks an unconstrained element.
  /// Includes the rounding of the reference's own output to its dtype.
  std::map<std::string, HostTensor> Bounds;
};

/// interpret(G, B) plus the bound of every output element. FastMath: the
/// bounds of a graph compiled with CompileOptions::FastMath (f32 sigmoid and
/// silu through __expf and __fdividef).
ReferenceResult interpretWithBounds(const Graph &G, const Bindings &B,
                                    bool FastMath = false);

/// Largest number of roundings on any path of a GPU summation of L terms
/// (see the reduction rule in ErrorBound.cpp); 0 for L <= 1.
int64_t summationDepth(int64_t L);

/// The same for a column reduction (axis 0 of [R, C]: L = R terms per
/// column, Cols = C; codegen/ColumnReduce.h): sequential runs per thread of
/// each split of the rows (codegen::columnSplits(R, C)), the threads'
/// partials, then the splits' partials, each in order.
/// For column lengths a row kernel may take the columns of
/// (codegen::launch::mixColumns; CompileOptions::MixOrderColumns), the
/// larger of that and mixColumnSummationDepth(L).
int64_t columnSummationDepth(int64_t L, int64_t Cols);

/// The same for the column partials of a row kernel (codegen/MixColumns.cpp):
/// groups of consecutive rows, then the groups' partials; the deepest over
/// the plans the schedule may make (group counts, rows a block).
int64_t mixColumnSummationDepth(int64_t L);

/// ... of one plan: at most \p MaxGroups groups, \p SubRows rows a block
/// (and a group).
int64_t mixColumnSummationDepth(int64_t L, int64_t MaxGroups, int64_t SubRows);

/// Documented maximum error of the CUDA library function the device code
/// calls for Op (in ulp, relative to the correctly rounded result) in the
/// given compute type (F32 or F64); 0 for correctly rounded operations.
double libraryUlps(Op O, DType Compute);

} // namespace jitfuse
