//===- tests/RandomRecipe.cpp - merging, decoding, shrinking recipes ------===//
//
// The recipe tools of tests/RandomGraph.h that do not generate: merged
// recipes (independent subgraphs side by side), recipes decoded from fuzzer
// bytes, the shrinker, and the bindings of a recipe's graph.
//
//===----------------------------------------------------------------------===//
#include "RandomGraph.h"

#include "exec/HostRun.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace jitfuse::test {

//===----------------------------------------------------------------------===//
// Merging, bytes, shrinking
//===----------------------------------------------------------------------===//

Recipe mergeRecipes(llvm::ArrayRef<Recipe> Rs) {
  Recipe M;
  for (size_t K = 0; K < Rs.size(); ++K) {
    const Recipe &R = Rs[K];
    std::string Prefix = fmt::format("g{}_", K);
    unsigned Base = static_cast<unsigned>(M.Ops.size());
    for (RecipeOp Rop : R.Ops) {
      for (unsigned &A : Rop.Args)
        A += Base;
      if (Rop.K == RKind::Input || Rop.K == RKind::Scalar)
        Rop.Name = Prefix + Rop.Name;
      for (Dim &D : Rop.Strides)
        if (llvm::StringRef(D.Name).startswith("ld"))
          D = Dim(Prefix + D.Name);
      M.Ops.push_back(std::move(Rop));
    }
    for (const auto &[Name, Idx] : R.Outputs)
      M.Outputs.push_back({Prefix + Name, Idx + Base});
    for (const auto &[Name, St] : R.OutputStrides)
      M.OutputStrides[Prefix + Name] = St;
    for (const auto &[Name, V] : R.Scalars)
      M.Scalars[Prefix + Name] = V;
    for (const auto &[Name, V] : R.Dims) {
      if (llvm::StringRef(Name).startswith("ld")) {
        M.Dims[Prefix + Name] = V;
        continue;
      }
      auto [It, New] = M.Dims.try_emplace(Name, V);
      if (!New && It->second != V)
        fail("mergeRecipes: dim '{}' is {} in one recipe and {} in another", Name,
             It->second, V);
    }
  }
  return M;
}

namespace {
class ByteReader {
public:
  explicit ByteReader(llvm::ArrayRef<uint8_t> B) : B(B) {}
  uint8_t next() { return Pos < B.size() ? B[Pos++] : 0; }
  Dim dim() {
    uint8_t V = next();
    if (V % 16 == 0)
      return Dim("B");
    if (V % 16 == 1)
      return Dim("T");
    if (V == 255)
      return Dim(int64_t(1) << (30 + next() % 34)); // up to 2^63
    if (V == 254)
      return Dim(-static_cast<int64_t>(next()));
    return Dim(static_cast<int64_t>(V / 4));
  }
  std::vector<Dim> dims() {
    std::vector<Dim> D(next() % 5);
    for (Dim &X : D)
      X = dim();
    return D;
  }

private:
  llvm::ArrayRef<uint8_t> B;
  size_t Pos = 0;
};
} // namespace

Recipe recipeFromBytes(llvm::ArrayRef<uint8_t> Bytes) {
  ByteReader In(Bytes);
  Recipe R;
  unsigned NIn = 1 + In.next() % 4;
  for (unsigned I = 0; I < NIn; ++I) {
    RecipeOp Rop;
    Rop.K = RKind::Input;
    Rop.T = static_cast<DType>(In.next() % 8); // 7 is out of range on purpose
    Rop.Name = fmt::format("x{}", I);
    Rop.Dims = In.dims();
    R.Ops.push_back(std::move(Rop));
  }
  unsigned NOps = In.next() % 32;
  for (unsigned I = 0; I < NOps; ++I) {
    RecipeOp Rop;
    Rop.K = static_cast<RKind>(In.next() % 14);
    Rop.O = static_cast<jitfuse::Op>(In.next() % 64); // some out of range
    Rop.T = static_cast<DType>(In.next() % 7);
    unsigned Size = static_cast<unsigned>(R.Ops.size());
    unsigned NArgs = 1 + In.next() % 3;
    for (unsigned A = 0; A < NArgs; ++A) {
      uint8_t V = In.next();
      Rop.Args.push_back(V >= 250 ? V : V % Size);
    }
    Rop.A0 = static_cast<int8_t>(In.next());
    Rop.A1 = static_cast<int8_t>(In.next());
    Rop.F = static_cast<int8_t>(In.next()) / 4.0;
    if (Rop.K == RKind::Input || Rop.K == RKind::Scalar)
      Rop.Name = fmt::format("n{}", I);
    if (Rop.K == RKind::Input || Rop.K == RKind::Broadcast || Rop.K == RKind::Reshape)
      Rop.Dims = In.dims();
    R.Ops.push_back(std::move(Rop));
  }
  unsigned NOut = In.next() % 4;
  for (unsigned I = 0; I < NOut; ++I)
    R.Outputs.push_back({fmt::format("y{}", I), In.next() % static_cast<unsigned>(R.Ops.size())});
  R.Dims = {{"B", In.next()}, {"T", In.next()}};
  return R;
}

/// Drops ops no output depends on, renumbering the rest, and bindings no
/// remaining op names.
static Recipe collectGarbage(const Recipe &R) {
  std::vector<bool> Live(R.Ops.size());
  for (const auto &O : R.Outputs)
    Live[O.second] = true;
  for (size_t I = R.Ops.size(); I-- > 0;)
    if (Live[I])
      for (unsigned A : R.Ops[I].Args)
        Live[A] = true;
  Recipe Out;
  Out.Seed = R.Seed;
  std::vector<unsigned> NewIdx(R.Ops.size());
  for (size_t I = 0; I < R.Ops.size(); ++I) {
    if (!Live[I])
      continue;
    NewIdx[I] = static_cast<unsigned>(Out.Ops.size());
    RecipeOp Rop = R.Ops[I];
    for (unsigned &A : Rop.Args)
      A = NewIdx[A];
    for (const std::vector<Dim> *Ds : {&Rop.Dims, &Rop.Strides})
      for (const Dim &D : *Ds)
        if (D.isDynamic() && R.Dims.count(D.Name))
          Out.Dims[D.Name] = R.Dims.at(D.Name);
    if (Rop.K == RKind::Scalar && R.Scalars.count(Rop.Name))
      Out.Scalars[Rop.Name] = R.Scalars.at(Rop.Name);
    Out.Ops.push_back(std::move(Rop));
  }
  for (const auto &[Name, Idx] : R.Outputs) {
    Out.Outputs.push_back({Name, NewIdx[Idx]});
    if (auto It = R.OutputStrides.find(Name); It != R.OutputStrides.end())
      Out.OutputStrides[Name] = It->second;
  }
  return Out;
}

Recipe shrinkRecipe(Recipe R, const std::function<bool(const Graph &)> &Fails) {
  auto StillFails = [&](const Recipe &C) {
    try {
      Graph G = buildGraph(C);
      G.verify();
      return Fails(G);
    } catch (const Error &) {
      return false; // not a valid graph: not a smaller repro
    }
  };
  if (Recipe C = collectGarbage(R); StillFails(C))
    R = std::move(C);
  for (bool Progress = true; Progress;) {
    Progress = false;
    for (size_t I = 0; R.Outputs.size() > 1 && I < R.Outputs.size();) {
      Recipe C = R;
      C.Outputs.erase(C.Outputs.begin() + static_cast<ptrdiff_t>(I));
      C = collectGarbage(C);
      if (StillFails(C)) {
        R = std::move(C);
        Progress = true;
      } else {
        ++I;
      }
    }
    // Plain layouts: a strided output or input pins its rank, so no op
    // before it could be bypassed by an operand of another shape.
    std::vector<std::string> Names;
    for (const auto &[Name, Idx] : R.Outputs)
      Names.push_back(Name);
    for (const std::string &Name : Names) {
      if (!R.OutputStrides.count(Name))
        continue;
      Recipe C = R;
      C.OutputStrides.erase(Name);
      if (StillFails(C)) {
        R = std::move(C);
        Progress = true;
      }
    }
    for (size_t I = 0; I < R.Ops.size(); ++I) {
      if (R.Ops[I].Strides.empty())
        continue;
      Recipe C = R;
      C.Ops[I].Strides.clear();
      if (StillFails(C)) {
        R = std::move(C);
        Progress = true;
      }
    }
    for (size_t I = R.Ops.size(); I-- > 0;) {
      if (I >= R.Ops.size())
        continue;
      std::vector<unsigned> Args = R.Ops[I].Args;
      for (unsigned A : Args) {
        Recipe C = R;
        for (size_t J = I + 1; J < C.Ops.size(); ++J)
          for (unsigned &X : C.Ops[J].Args)
            if (X == I)
              X = A;
        for (auto &O : C.Outputs)
          if (O.second == I)
            O.second = A;
        C = collectGarbage(C);
        if (StillFails(C)) {
          R = std::move(C);
          Progress = true;
          break;
        }
      }
    }
  }
  return R;
}

Bindings recipeBindings(const Graph &G, const Recipe &R, uint64_t Seed) {
  Bindings B;
  for (const std::string &D : G.dynamicDims())
    B.Dims[D] = R.Dims.at(D);
  for (NodeId N : G.scalars())
    B.Scalars[G.node(N).Name] = R.Scalars.at(G.node(N).Name);
  std::mt19937_64 Rng(Seed);
  for (NodeId N : G.inputs())
    B.Inputs[G.node(N).Name] =
        randomTensor(G.node(N).Type, resolveShape(G.node(N).Dims, B.Dims), Rng);
  foldStridedInputs(G, B);
  return B;
}

} // namespace jitfuse::test
