//===- compiler/LowerAxes.cpp - outer and mixed reduction axes ------------===//
#include "compiler/LowerAxes.h"

#include "compiler/ReduceAxes.h"
#include "ir/ReduceForm.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse {

bool needsAxesLowering(const Node &N) {
  return isReduction(N.Kind) && N.scope() == ReduceScope::Axes && !isColumnReduction(N) &&
         !isInnerAxes(N.reducedAxes(), N.rank());
}

namespace {
/// The product of Ds as one dim: a number, or a product of names when the
/// static factors multiply to 1. nullopt when it needs both.
std::optional<Dim> productDim(llvm::ArrayRef<Dim> Ds) {
  int64_t Static = 1;
  std::string Names;
  for (const Dim &D : Ds) {
    if (D.isDynamic())
      Names += (Names.empty() ? "" : "*") + D.Name;
    else
      Static *= D.Size;
  }
  if (Names.empty() || Static == 0)
    return Dim(Static);
  if (Static != 1)
    return std::nullopt;
  return Dim(Names);
}

std::string axesText(const Node &N) {
  std::string S;
  for (unsigned I = 0; I < N.rank(); ++I)
    if (N.reducedAxes() & (1u << I))
      S += (S.empty() ? "" : ",") + std::to_string(I);
  return "{" + S + "}";
}

/// X reduced by O over Mask in one kernel: a row stage (kept axes first,
/// the reduced ones last, reshaped to the result's shape with the reduced
/// elements as its last dim) or a column stage ([reduced..., kept...] as
/// [R, K], the [1, K] result reshaped to the result's shape). Id, N and
/// UserShape name the user's reduction in errors.
Value lowerStage(Value X, Op O, const ReduceStage &St, NodeId Id, const Node &N,
                 const Shape &UserShape) {
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
  auto Product = [&](llvm::ArrayRef<Dim> Ds, const char *What) {
    std::optional<Dim> P = productDim(Ds);
    if (!P)
      fail("%{} {} over axes {} of {}: the {} dims {} must merge into one dim to run as a "
           "{} reduction, and a dim is a number or a product of names, not both",
           Id, opName(N.Kind).str(), axesText(N), shapeStr(UserShape), What, shapeStr(Ds),
           St.Row ? "row" : "column");
    return *P;
  };
  llvm::SmallVector<int64_t, 4> Perm;
  for (unsigned I : St.Row ? Kept : Reduced)
    Perm.push_back(I);
  for (unsigned I : St.Row ? Reduced : Kept)
    Perm.push_back(I);
  Value P = permute(X, Perm);
  if (St.Row) {
    Shape Q(Result.begin(), Result.end() - 1);
    Q.push_back(Product(RDims, "reduced"));
    return reduce(O, reshape(P, Q), ReduceScope::LastAxis);
  }
  Shape Q{Product(RDims, "reduced"), Product(KDims, "kept")};
  return reshape(reduce(O, reshape(P, Q), {0}), Result);
}

/// The value of reduction N (operands mapped into R), lowered to its
/// stages (ir/ReduceForm.h). Between two stages a sum or mean of
/// half-precision values stays in f32 (the user's reduction rounds once, at
/// the end); a mean of means over equal counts is the mean.
NodeId lowerOne(Graph &R, NodeId Id, const Node &N) {
  Value X = R.value(N.Operands[0]);
  const Shape UserShape = X.shape();
  llvm::SmallVector<ReduceStage, 2> Stages = reduceStages(UserShape, N.reducedAxes());
  if (Stages.size() > 1 && (N.Kind == Op::ReduceSum || N.Kind == Op::ReduceMean) &&
      isFloat(X.dtype()) && dtypeBytes(X.dtype()) < 4)
    X = cast(X, DType::F32);
  for (const ReduceStage &St : Stages)
    X = lowerStage(X, N.Kind, St, Id, N, UserShape);
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
  return G.rebuilt([&](Graph &R, NodeId Id, const Node &N) -> std::optional<NodeId> {
    if (!needsAxesLowering(N))
      return std::nullopt;
    return lowerOne(R, Id, N);
  });
}

} // namespace jitfuse
