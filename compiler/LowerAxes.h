//===- compiler/LowerAxes.h - outer and mixed reduction axes -----*- C++ -*-===//
//
// A reduction over a set of axes that is neither inner (compiler/ReduceAxes.h
// merges those into rows) nor axis 0 of a rank-2 tensor (a column reduction)
// is lowered to those two forms over a permuted view of its operand, in the
// stages ir/ReduceForm.h gives it (one, or two when a long innermost run is
// reduced first as contiguous rows), each one reduction kernel with its
// prologue. A stage:
//
// - the innermost axis with more than one element is reduced ({0, 2} of
//   [A, B, C]): a row reduction. The operand is permuted to [kept...,
//   reduced...] and reshaped to the result's shape with its last dim the
//   reduced elements ([1, B, A*C]); the last-axis reduction then has the
//   result's shape, so nothing follows it.
// - it is kept ({1} of [A, B, C]): a column reduction. The operand is
//   permuted to [reduced..., kept...] and reshaped to [R, K] ([B, A*C]); the
//   [1, K] result is reshaped back ([A, 1, C]) in the same kernel.
//
// Both reshapes keep the permuted element order, so a kernel reads the
// operand in place (codegen/Emitter.h: views); the kept elements are in the
// result's order, since reduced axes are 1 in the result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <optional>

namespace jitfuse {

/// Whether the reduction N is lowered by lowerReduceAxes.
bool needsAxesLowering(const Node &N);

/// nullopt when no reduction of G needs lowering; else G rebuilt with each
/// such reduction replaced by its stages (later node ids shift). Merged
/// dims are products: a number, or names times a number ("64*B").
std::optional<Graph> lowerReduceAxes(const Graph &G);

} // namespace jitfuse
