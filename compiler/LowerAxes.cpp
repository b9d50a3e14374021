//===- compiler/LowerAxes.cpp - outer and mixed reduction axes ------------===//
#include "compiler/LowerAxes.h"

#include "compiler/ReduceAxes.h"
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

/// Terms a first stage must reduce per result (its innermost reduced run)
/// for the two-stage row form: its [.., 1] intermediate is then at most
/// 1/32 of the operand's elements, so the second read costs little next to
/// the first, which reads contiguous runs in vectors.
constexpr int64_t MinFirstStageRun = 32;

/// Lowers the reduction O over Mask of X (in R) to row and column
/// reductions; returns a value of the reduction's shape and of type T (the
/// user's node's type). Id and N name the user's node in errors.
Value lowerMask(Value X, Op O, uint32_t Mask, DType T, NodeId Id, const Node &N,
                const Shape &UserShape) {
  const Shape S = X.shape();
  unsigned Rank = static_cast<unsigned>(S.size());
  Shape Result(S.begin(), S.end());
  llvm::SmallVector<unsigned, 4> Reduced, Kept;
  Shape RDims, KDims;
  int Last = -1; // the innermost axis with more than one element
  for (unsigned I = 0; I < Rank; ++I) {
    bool Red = Mask & (1u << I);
    (Red ? Reduced : Kept).push_back(I);
    (Red ? RDims : KDims).push_back(S[I]);
    if (Red)
      Result[I] = Dim(1);
    if (!S[I].isStatic(1))
      Last = static_cast<int>(I);
  }
  // Only size-1 axes reduced: each result element is its one operand
  // element, converted to the result's type.
  bool AnyBig = llvm::any_of(Reduced, [&](unsigned I) { return !S[I].isStatic(1); });
  if (!AnyBig)
    return cast(X, T);
  bool Row = Mask & (1u << Last);
  auto Product = [&](llvm::ArrayRef<Dim> Ds, const char *What) {
    std::optional<Dim> P = productDim(Ds);
    if (!P)
      fail("%{} {} over axes {} of {}: the {} dims {} must merge into one dim to run as a "
           "{} reduction, and a dim is a number or a product of names, not both",
           Id, opName(N.Kind).str(), axesText(N), shapeStr(UserShape), What,
           shapeStr(Ds), Row ? "row" : "column");
    return *P;
  };
  // The innermost run of reduced axes with more than one element, and
  // whether another reduced axis with more than one element lies outside
  // it (a kept one between them).
  unsigned RunStart = static_cast<unsigned>(Last);
  while (Row && RunStart > 0 && ((Mask >> (RunStart - 1)) & 1u))
    --RunStart;
  bool Outside = false;
  for (unsigned I = 0; I < RunStart; ++I)
    Outside |= Row && (Mask & (1u << I)) && !S[I].isStatic(1);
  Shape RunDims(S.begin() + RunStart, S.end());
  std::optional<int64_t> RunLen = staticNumel(RunDims);
  if (Row && Outside && (!RunLen || *RunLen >= MinFirstStageRun) && productDim(RunDims)) {
    // Two stages: the innermost run as rows read in place (a reshape, no
    // permute), then the rest of the axes over the small intermediate. A
    // sum or mean of half-precision values keeps its partial results in
    // f32 (the user's reduction rounds once, at the end); a mean of means
    // over equal counts is the mean.
    Value In = X;
    if ((O == Op::ReduceSum || O == Op::ReduceMean) && isFloat(X.dtype()) &&
        dtypeBytes(X.dtype()) < 4)
      In = cast(X, DType::F32);
    Shape Q(S.begin(), S.begin() + RunStart);
    Q.append(Rank - RunStart - 1, Dim(1));
    Q.push_back(*productDim(RunDims));
    Value First = reduce(O, reshape(In, Q), ReduceScope::LastAxis);
    uint32_t Rest = Mask & ((1u << RunStart) - 1);
    return cast(lowerMask(First, O, Rest, First.dtype(), Id, N, UserShape), T);
  }
  llvm::SmallVector<int64_t, 4> Perm;
  for (unsigned I : Row ? Kept : Reduced)
    Perm.push_back(I);
  for (unsigned I : Row ? Reduced : Kept)
    Perm.push_back(I);
  Value P = permute(X, Perm);
  Value Red;
  if (Row) {
    // The result's shape with its last dim (reduced, or a kept 1) holding
    // the reduced elements: the last-axis reduction's result is the
    // reduction's shape.
    Shape Q(Result.begin(), Result.end() - 1);
    Q.push_back(Product(RDims, "reduced"));
    Red = reduce(O, reshape(P, Q), ReduceScope::LastAxis);
  } else {
    Shape Q{Product(RDims, "reduced"), Product(KDims, "kept")};
    Red = reshape(reduce(O, reshape(P, Q), {0}), Result);
  }
  return cast(Red, T);
}

/// The value of reduction N (operands mapped into R), lowered.
NodeId lowerOne(Graph &R, NodeId Id, const Node &N) {
  Value X = R.value(N.Operands[0]);
  Value V = lowerMask(X, N.Kind, N.reducedAxes(), N.Type, Id, N, X.shape());
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
