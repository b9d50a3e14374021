//===- reference/Tolerance.h - the comparison rule of GPU tests -*- C++ -*-===//
//
// How a GPU result is judged against the fp64 reference. The rule and the
// reasoning behind its constants are in docs/NUMERICS.md ("Tolerance").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "reference/HostTensor.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <map>
#include <string>

namespace jitfuse {

struct CompareResult {
  bool Ok = true;
  std::string Message; // empty when Ok
  int64_t Mismatches = 0;
  /// Bound-aware comparison only: elements whose bound is +inf (accepted
  /// whatever they hold), and elements that fail the rtol rule but pass
  /// through their bound.
  int64_t Unconstrained = 0;
  int64_t PassedByBound = 0;
};

/// Element-wise comparison of Got against Ref (same shape required):
///   NaN matches only NaN; +-Inf matches only the same Inf; bool and integer
///   dtypes must be equal; finite floats pass when
///     |got - ref| <= Rtol * (|ref| + rms(ref over its finite elements)).
/// The message starts with What, gives the mismatch count and the first few
/// mismatching linear indices with got/ref values.
CompareResult compareTensors(const HostTensor &Got, const HostTensor &Ref,
                             double Rtol, llvm::StringRef What);

/// The factor on an element's error bound in the bound-aware comparison.
/// The bound is a first-order worst case built on CUDA's documented ulp
/// errors, which NVIDIA states come from extensive but not exhaustive
/// tests; 2 covers the dropped second-order terms and an occasional ulp
/// beyond the table, while the allowance stays a few ulp of the value where
/// nothing cancels, so a wrong element (an error of the order of the value)
/// still fails. See docs/NUMERICS.md ("Error bounds").
inline constexpr double BoundSafety = 2;

/// compareTensors with a per-element absolute error bound (an f64 tensor
/// shaped like Ref, from interpretWithBounds in reference/ErrorBound.h). An element
/// passes when it passes the rule above, or
///   |got - ref| <= BoundSafety * bound,
/// or its bound is +inf: unconstrained, so any value passes, NaN and Inf
/// included. Counts the unconstrained elements and those that pass only
/// through the bound (CompareResult::Unconstrained, PassedByBound); a
/// mismatch message reports both and each shown element's bound.
CompareResult compareTensors(const HostTensor &Got, const HostTensor &Ref,
                             const HostTensor &Bound, double Rtol,
                             llvm::StringRef What);

/// Unit roundoff-like spacing of a dtype: 2^-23 (f32), 2^-10 (f16),
/// 2^-7 (bf16), 2^-52 (f64); 0 for integers and bool.
double dtypeEpsilon(DType T);

/// Rtol for an output of dtype Out that went through reductions of at most
/// ReductionLength elements:
///   8 * max(eps(Out), 2^-23) * (1 + sqrt(ReductionLength) / 4)
/// and 0 for integer/bool outputs. The 2^-23 floor: kernels compute in f32
/// (intrinsics with up to 4 ulp error), so even an f64 output carries f32
/// error whenever an f32 intermediate feeds it.
double toleranceFor(DType Out, int64_t ReductionLength = 1);

/// The most elements any one reduction result reduces on any path into Out
/// (1 when there is none), with dynamic dims taken from Dims.
int64_t maxReductionLength(const Graph &G, NodeId Out,
                           const std::map<std::string, int64_t> &Dims);

} // namespace jitfuse
