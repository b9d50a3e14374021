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

/// The value of reduction N (operands mapped into R) in its row or column
/// form.
NodeId lowerOne(Graph &R, NodeId Id, const Node &N) {
  Value X = R.value(N.Operands[0]);
  const Shape S = X.shape();
  uint32_t Mask = N.reducedAxes();
  llvm::SmallVector<unsigned, 4> Reduced, Kept;
  Shape RDims, KDims;
  int Last = -1; // the innermost axis with more than one element
  for (unsigned I = 0; I < S.size(); ++I) {
    bool Red = Mask & (1u << I);
    (Red ? Reduced : Kept).push_back(I);
    (Red ? RDims : KDims).push_back(S[I]);
    if (!S[I].isStatic(1))
      Last = static_cast<int>(I);
  }
  // Only size-1 axes reduced: each result element is its one operand
  // element, converted to the result's type.
  bool AnyBig = llvm::any_of(Reduced, [&](unsigned I) { return !S[I].isStatic(1); });
  if (!AnyBig)
    return cast(X, N.Type).id();
  auto Product = [&](llvm::ArrayRef<Dim> Ds, const char *What) {
    std::optional<Dim> P = productDim(Ds);
    if (!P)
      fail("%{} {} over axes {} of {}: the {} dims {} must merge into one dim to run as a "
           "{} reduction, and a dim is a number or a product of names, not both",
           Id, opName(N.Kind).str(), axesText(N), shapeStr(S), What, shapeStr(Ds),
           Last >= 0 && (Mask & (1u << Last)) ? "row" : "column");
    return *P;
  };
  bool Row = Mask & (1u << Last);
  llvm::SmallVector<int64_t, 4> Perm;
  for (unsigned I : Row ? Kept : Reduced)
    Perm.push_back(I);
  for (unsigned I : Row ? Reduced : Kept)
    Perm.push_back(I);
  Value P = permute(X, Perm);
  Value Red;
  if (Row) {
    // The result's shape with its last dim (reduced, or a kept 1) holding
    // the reduced elements: the last-axis reduction's result is N's shape.
    Shape Q(N.Dims.begin(), N.Dims.end() - 1);
    Q.push_back(Product(RDims, "reduced"));
    Red = reduce(N.Kind, reshape(P, Q), ReduceScope::LastAxis);
  } else {
    Shape Q{Product(RDims, "reduced"), Product(KDims, "kept")};
    Red = reshape(reduce(N.Kind, reshape(P, Q), {0}), N.Dims);
  }
  JITFUSE_CHECK(Red.dtype() == N.Type && Red.shape() == N.Dims,
                "a lowered reduction has the reduction's type and shape");
  return Red.id();
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
