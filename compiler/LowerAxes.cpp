//===- compiler/LowerAxes.cpp - outer and mixed reduction axes ------------===//
#include "compiler/LowerAxes.h"

#include "compiler/ReduceAxes.h"
#include "ir/ReduceForm.h"
#include "support/Error.h"

namespace jitfuse {

bool needsAxesLowering(const Node &N) {
  return isReduction(N.Kind) && N.scope() == ReduceScope::Axes && !isColumnReduction(N) &&
         !isInnerAxes(N.reducedAxes(), N.rank());
}

namespace {
/// X reduced by O over the stage's axes in one kernel: a row stage (kept axes first,
/// the reduced ones last, reshaped to the result's shape with the reduced
/// elements as its last dim) or a column stage ([reduced..., kept...] as
/// [R, K], the [1, K] result reshaped to the result's shape).
Value lowerStage(Value X, Op O, const ReduceStage &St) {
  const Shape S = X.shape();
  Shape Result(S.begin(), S.end());
  llvm::SmallVector<unsigned, 4> Reduced, Kept;
  Shape RDims, KDims;
  for (unsigned I = 0; I < S.size(); ++I) {
    bool Red = St.Axes & (1u << I);
    (Red ? Reduced : Kept).push_back(I);
    (Red ? RDims : KDims).push_back(S[I]);
    if (Red)
      Result[I] = Dim(1);
  }
  llvm::SmallVector<int64_t, 4> Perm;
  for (unsigned I : St.Row ? Kept : Reduced)
    Perm.push_back(I);
  for (unsigned I : St.Row ? Reduced : Kept)
    Perm.push_back(I);
  Value P = permute(X, Perm);
  if (St.Row) {
    Shape Q(Result.begin(), Result.end() - 1);
    Q.push_back(productDim(RDims));
    return reduce(O, reshape(P, Q), ReduceScope::LastAxis);
  }
  Shape Q{productDim(RDims), productDim(KDims)};
  return reshape(reduce(O, reshape(P, Q), {0}), Result);
}

/// The value of reduction N (operands mapped into R), lowered to its
/// stages (ir/ReduceForm.h). Between two stages a sum or mean of
/// half-precision values stays in f32 (the user's reduction rounds once, at
/// the end); a mean of means over equal counts is the mean.
NodeId lowerOne(Graph &R, const Node &N) {
  Value X = R.value(N.Operands[0]);
  llvm::SmallVector<ReduceStage, 2> Stages = reduceStages(X.shape(), N.reducedAxes());
  if (Stages.size() > 1 && (N.Kind == Op::ReduceSum || N.Kind == Op::ReduceMean) &&
      isFloat(X.dtype()) && dtypeBytes(X.dtype()) < 4)
    X = cast(X, DType::F32);
  for (const ReduceStage &St : Stages)
    X = lowerStage(X, N.Kind, St);
  Value V = cast(X, N.Type); // only size-1 axes reduced: the element itself
  JITFUSE_CHECK(V.dtype() == N.Type && V.shape() == N.Dims,
                "a lowered reduction has the reduction's type and shape");
  return V.id();
}
} // namespace

std::optional<Graph> lowerReduceAxes(const Graph &G) {
  bool Any = false;
  for (NodeId Id = 0; Id < G.size(); ++Id)
    Any |= needsAxesLowering(G.node(Id));
  if (!Any)
    return std::nullopt;
  return G.rebuilt([&](Graph &R, NodeId, const Node &N) -> std::optional<NodeId> {
    if (!needsAxesLowering(N))
      return std::nullopt;
    return lowerOne(R, N);
  });
}

} // namespace jitfuse
