//===- ir/ReduceForm.h - the kernels a reduction over axes runs as -*- C++ -*-===//
//
// One rule, read by the compiler (compiler/LowerAxes.h builds the kernels'
// graph from it) and by the reference's error bound (the summation depth of
// those kernels): a reduction over a set of axes runs as one or two stages,
// each a row reduction (its axes last, their product one row) or a column
// reduction (its axes first, [reduced, kept]).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"

#include <llvm/ADT/SmallVector.h>

namespace jitfuse {

struct ReduceStage {
  bool Row = true;   // a row reduction; else a column reduction
  uint32_t Axes = 0; // the axes it reduces (bit I: axis I of the operand)
};

/// Terms a first stage must reduce per result for the two-stage row form:
/// its intermediate is then at most 1/32 of the operand's elements.
constexpr int64_t MinFirstStageRun = 32;

/// The stages of a reduction over Mask of a tensor of shape S, in order
/// (each on the previous stage's result, whose reduced axes are 1):
/// - none when only size-1 axes are reduced;
/// - axis 0 of a rank-2 tensor: one column stage;
/// - the innermost axes: one row stage (compiler/ReduceAxes.h merges them);
/// - otherwise by the innermost axis with more than one element: kept, one
///   column stage; reduced, a row stage, split in two when another reduced
///   axis with more than one element lies outside the innermost reduced run
///   and that run is dynamic or holds >= MinFirstStageRun elements (the run
///   first, then the rest of the axes by these rules).
llvm::SmallVector<ReduceStage, 2> reduceStages(llvm::ArrayRef<Dim> S, uint32_t Mask);

/// Whether a reduction over Mask of rank Rank is over its innermost axes.
bool isInnerAxes(uint32_t Mask, unsigned Rank);

/// Whether it is over axis 0 of a rank-2 tensor (a column reduction as it
/// stands).
inline bool isColumnAxes(uint32_t Mask, unsigned Rank) { return Rank == 2 && Mask == 1u; }

} // namespace jitfuse
