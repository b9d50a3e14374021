//===- compiler/ReduceAxes.cpp - reductions over axes as row reductions ---===//
#include "compiler/ReduceAxes.h"

#include "ir/Printer.h"
#include "support/Error.h"

namespace jitfuse {

bool isColumnReduction(const Node &N) {
  return isReduction(N.Kind) && N.scope() == ReduceScope::Axes &&
         isColumnAxes(N.reducedAxes(), N.rank());
}

namespace {
/// The trailing dims every inner reduction merges, and what a shape looks
/// like through the merge.
struct Merge {
  Shape Tail;   // the reduced trailing dims, e.g. [C/G, HW]
  Dim Prod;     // their product (a number, or names times a number)

  /// S with its trailing Tail.size() dims merged; nullopt when they are
  /// neither Tail nor all 1.
  std::optional<Shape> view(llvm::ArrayRef<Dim> S) const {
    size_t L = Tail.size();
    auto AllOne = [](llvm::ArrayRef<Dim> D) {
      return std::all_of(D.begin(), D.end(), [](const Dim &X) { return X.isStatic(1); });
    };
    if (S.size() < L) {
      if (AllOne(S))
        return Shape(S.begin(), S.end()); // broadcasts against anything
      return std::nullopt;
    }
    llvm::ArrayRef<Dim> T = S.take_back(L);
    Shape R(S.begin(), S.end() - L);
    if (T == llvm::ArrayRef<Dim>(Tail))
      R.push_back(Prod);
    else if (AllOne(T))
      R.push_back(Dim(1));
    else
      return std::nullopt;
    return R;
  }
};

std::string axesOf(const Node &N) {
  std::string S;
  for (unsigned I = 0; I < N.rank(); ++I)
    if (N.reducedAxes() & (1u << I))
      S += (S.empty() ? "" : ",") + std::to_string(I);
  return "{" + S + "}";
}
} // namespace

std::optional<Graph> rowViewOfAxes(const Graph &G) {
  std::optional<Merge> M;
  NodeId First = 0;
  for (NodeId Id = 0; Id < G.size(); ++Id) {
    const Node &N = G.node(Id);
    if (!isReduction(N.Kind) || N.scope() != ReduceScope::Axes)
      continue;
    const Shape &X = G.node(N.Operands[0]).Dims;
    if (isColumnReduction(N))
      continue;
    JITFUSE_CHECK(isInnerAxes(N.reducedAxes(), N.rank()),
                  "outer and mixed axes are lowered first (compiler/LowerAxes.h)");
    unsigned K = 0;
    while (!(N.reducedAxes() & (1u << K)))
      ++K;
    Shape Tail(X.begin() + K, X.end());
    if (!M) {
      M = Merge{Tail, productDim(Tail)};
      First = Id;
    } else if (llvm::ArrayRef<Dim>(M->Tail) != llvm::ArrayRef<Dim>(Tail)) {
      fail("%{} {} over axes {} reduces the trailing dims {} but %{} reduces {}; "
           "one graph may merge only one set of trailing dims into rows",
           Id, opName(N.Kind).str(), axesOf(N), shapeStr(Tail), First,
           shapeStr(M->Tail));
    }
  }
  if (!M)
    return std::nullopt;

  auto Refuse = [&](NodeId Id, const std::string &Why) {
    fail("%{} (in '{}'): cannot plan the reduction %{} over the merged dims {}: "
         "{}",
         Id, printNode(G, Id), First, shapeStr(M->Tail), Why);
  };
  // Each node's shape through the merge. A shape the merge cannot express
  // ([N, 320, HW] where [10, HW] merges) keeps its dims: right as long as
  // only reshapes (which keep the element order) connect it to merged ones.
  std::vector<Shape> Dims(G.size());
  std::vector<bool> Kept(G.size(), false), Changed(G.size(), false);
  for (NodeId Id = 0; Id < G.size(); ++Id) {
    const Shape &S = G.node(Id).Dims;
    std::optional<Shape> V = M->view(S);
    Kept[Id] = !V;
    Dims[Id] = V ? *V : S;
    Changed[Id] = llvm::ArrayRef<Dim>(Dims[Id]) != llvm::ArrayRef<Dim>(S);
  }
  for (NodeId Id = 0; Id < G.size(); ++Id) {
    const Node &N = G.node(Id);
    if (N.Kind == Op::Reshape)
      continue;
    // A column reduction stays what it is in the view (a bias gradient
    // beside a GroupNorm): right while the merge leaves its [R, C] operand
    // and [1, C] result alone.
    bool Column = isColumnReduction(N);
    if (Column && (Changed[Id] || Changed[N.Operands[0]]))
      Refuse(Id, "it reduces axis 0 of " + shapeStr(G.node(N.Operands[0]).Dims) +
                     ", which the merge joins with other axes");
    for (NodeId Op : N.Operands) {
      if (Kept[Id] && Changed[Op])
        Refuse(Id, "its shape " + shapeStr(N.Dims) +
                       " is neither the reduced dims nor all 1 in its trailing dims, and "
                       "its operand %" + std::to_string(Op) + " is merged");
      if (Kept[Op] && (Changed[Id] || (isReduction(N.Kind) && !Column)))
        Refuse(Op, "the trailing dims of " + shapeStr(G.node(Op).Dims) +
                       " are neither the reduced dims nor all 1");
    }
    // Last-axis ops see the merged row: they are only right where the merge
    // leaves the shape's last axis alone.
    // A permute moves axes the merge may join: seen through the merge only
    // where it touches no merged shape.
    if (N.Kind == Op::Permute && (Changed[Id] || Changed[N.Operands[0]]))
      Refuse(Id, "it permutes the axes of " + shapeStr(G.node(N.Operands[0]).Dims) +
                     ", which the merge joins");
    bool LastAxisOp = N.Kind == Op::Slice || N.Kind == Op::Concat ||
                      (isReduction(N.Kind) && N.scope() == ReduceScope::LastAxis);
    for (NodeId Op : N.Operands) {
      const Shape &S = G.node(Op).Dims;
      if (LastAxisOp && !S.empty() && Changed[Op] && Dims[Op].back() != S.back())
        Refuse(Id, std::string(opName(N.Kind)) + " works on the last axis of " +
                       shapeStr(S) + ", which the merge joins with other axes");
    }
  }
  // A strided input or output seen through the merge: the merged dim's
  // stride is its innermost dim's, right when the merged dims are
  // contiguous among themselves (a padded row of [C/G, HW] is).
  auto MergedStrides = [&](NodeId Id, llvm::ArrayRef<Dim> S, const std::string &What) -> Shape {
    if (S.empty() || !Changed[Id])
      return Shape(S.begin(), S.end());
    const Shape &From = G.node(Id).Dims;
    size_t First = From.size() - M->Tail.size();
    // The merged dims (those of one element aside) must nest: each stride
    // the next inner one's times that dim, all static unless only one dim
    // has more than one element.
    llvm::SmallVector<size_t, 4> Big;
    for (size_t J = First; J < From.size(); ++J)
      if (!From[J].isStatic(1))
        Big.push_back(J);
    Shape R(S.begin(), S.begin() + First);
    if (Big.size() <= 1) {
      R.push_back(Big.empty() ? S.back() : S[Big.front()]);
      return R;
    }
    for (size_t K = 0; K + 1 < Big.size(); ++K) {
      const Dim &Outer = S[Big[K]], &Inner = S[Big[K + 1]];
      if (Outer.isDynamic() || Inner.isDynamic() || From[Big[K + 1]].isDynamic() ||
          Outer.Size != Inner.Size * From[Big[K + 1]].Size)
        Refuse(Id, fmt::format("{} has strides {}, and the merge joins its dims {} into one "
                               "row, which needs them static and contiguous among themselves",
                               What, shapeStr(S), shapeStr(M->Tail)));
    }
    R.push_back(S[Big.back()]);
    return R;
  };
  auto EditNode = [&](NodeId Id, Node &N) {
    N.Dims = Dims[Id];
    N.Strides = MergedStrides(Id, N.Strides, "input '" + N.Name + "'");
    if (isReduction(N.Kind) && N.scope() == ReduceScope::Axes && !isColumnReduction(N)) {
      N.A0 = static_cast<int64_t>(ReduceScope::LastAxis);
      N.A1 = 0;
    }
  };
  auto EditOutput = [&](GraphOutput &O) {
    O.Strides = MergedStrides(O.Id, O.Strides, "output '" + O.Name + "'");
  };
  return G.relabeled(EditNode, EditOutput);
}

} // namespace jitfuse
