//===- compiler/RowValues.cpp - per-element values a row kernel keeps -----===//
//
// A row kernel runs one loop over its row per reduction stage and one for
// its whole-row outputs (the epilogue). A per-element value needed by more
// than one of those loops is either computed again from the inputs (read
// again from memory, or from the register cache) or kept in registers by
// the first loop that computes it (KernelPlan::CachedValues, `kv` arrays).
//
//===----------------------------------------------------------------------===//
#include "compiler/RowValues.h"

#include "codegen/KernelPlan.h"

#include <llvm/ADT/STLExtras.h>

#include <map>
#include <set>

namespace jitfuse {

/// Mirrors valuesToKeep's cost rule: library calls and divisions (softmax's
/// exp is ~8 instructions an element, and a row kernel computed it once per
/// stage).
static bool costlyToRecompute(Op K) {
  const OpInfo &I = opInfo(K);
  if (I.Kind == OpKind::Unary)
    return I.Bound == BoundRule::Rule && K != Op::Cast && K != Op::Not;
  return K == Op::Div || K == Op::Pow || K == Op::Mod;
}

namespace {
/// The loops of a row cluster, in the order codegen emits them: each
/// reduction stage's, then the epilogue's, each with the roots it
/// evaluates (a stage's reduction operands, the epilogue's whole-row
/// outputs).
struct RowLoops {
  std::vector<std::vector<NodeId>> Roots;

  RowLoops(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
    std::map<NodeId, int> Stage = reductionStages(G, C.Nodes);
    int Epilogue = 0;
    for (auto &[N, S] : Stage)
      Epilogue = std::max(Epilogue, S + 1);
    Roots.resize(Epilogue + 1);
    for (NodeId N : C.Nodes)
      if (auto It = Stage.find(N); It != Stage.end())
        Roots[It->second].push_back(G.node(N).Operands[0]);
    for (NodeId O : C.Outputs)
      if (sameNumel(G.node(O).Dims, Domain))
        Roots[Epilogue].push_back(O);
  }
};
} // namespace

std::vector<NodeId> valuesToKeep(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
  std::set<NodeId> InCluster(C.Nodes.begin(), C.Nodes.end());
  RowLoops L(G, C, Domain);
  // Loops that evaluate each node: a reduction's operand cone in its
  // stage's loop, a whole-row output's cone in the epilogue.
  std::map<NodeId, std::set<int>> Loops;
  for (int Loop = 0; Loop < int(L.Roots.size()); ++Loop) {
    std::vector<NodeId> Work = L.Roots[Loop];
    while (!Work.empty()) {
      NodeId N = Work.back();
      Work.pop_back();
      if (!InCluster.count(N) || isReduction(G.node(N).Kind) || !Loops[N].insert(Loop).second)
        continue;
      for (NodeId O : G.node(N).Operands)
        Work.push_back(O);
    }
  }
  std::vector<NodeId> Keep;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    auto It = Loops.find(N);
    if (It == Loops.end() || It->second.size() < 2 || !costlyToRecompute(Nd.Kind) ||
        llvm::ArrayRef<Dim>(Nd.Dims) != Domain || !isFloat(Nd.Type))
      continue;
    Keep.push_back(N);
  }
  return Keep;
}

std::vector<NodeId> valuesCoveringInputs(const Graph &G, const Cluster &C,
                                         llvm::ArrayRef<Dim> Domain,
                                         llvm::ArrayRef<unsigned> Staged) {
  std::set<NodeId> InCluster(C.Nodes.begin(), C.Nodes.end());
  std::set<NodeId> StagedNodes;
  int64_t InputBytes = 0;
  for (unsigned I : Staged)
    if (StagedNodes.insert(C.Inputs[I]).second)
      InputBytes += dtypeBytes(G.node(C.Inputs[I]).Type);
  if (StagedNodes.empty())
    return {};
  RowLoops L(G, C, Domain);
  // Walks each loop's cones the way codegen evaluates them, stopping at
  // reductions (a row's reduced value), at inputs (a load) and, with
  // \p Cut, at values an earlier loop kept. Records each node's loops.
  auto Walk = [&](const std::set<NodeId> *Cut, std::map<NodeId, std::set<int>> &Loops) {
    std::set<NodeId> Computed;
    for (int Loop = 0; Loop < int(L.Roots.size()); ++Loop) {
      std::set<NodeId> KeptHere;
      std::vector<NodeId> Work = L.Roots[Loop];
      while (!Work.empty()) {
        NodeId N = Work.back();
        Work.pop_back();
        if (!Loops[N].insert(Loop).second || !InCluster.count(N) || isReduction(G.node(N).Kind))
          continue;
        if (Cut && Cut->count(N)) {
          if (Computed.count(N))
            continue; // read from its registers
          KeptHere.insert(N);
        }
        for (NodeId O : G.node(N).Operands)
          Work.push_back(O);
      }
      Computed.insert(KeptHere.begin(), KeptHere.end());
    }
  };
  std::map<NodeId, std::set<int>> Loops;
  Walk(nullptr, Loops);
  std::set<NodeId> Cut;
  std::vector<NodeId> Keep;
  int64_t ValueBytes = 0;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    auto It = Loops.find(N);
    if (It == Loops.end() || It->second.size() < 2 || llvm::ArrayRef<Dim>(Nd.Dims) != Domain ||
        !isFloat(Nd.Type) ||
        llvm::none_of(Nd.Operands, [&](NodeId O) { return StagedNodes.count(O) > 0; }))
      continue;
    Cut.insert(N);
    Keep.push_back(N);
    // Kept in the compute type: f32 for 16-bit floats (codegen's kv arrays).
    ValueBytes += Nd.Type == DType::F64 ? 8 : 4;
  }
  if (Keep.empty() || ValueBytes >= InputBytes)
    return {};
  // With the values kept, every stage input must be read in one loop only.
  std::map<NodeId, std::set<int>> CutLoops;
  Walk(&Cut, CutLoops);
  for (NodeId I : StagedNodes)
    if (CutLoops[I].size() > 1)
      return {};
  return Keep;
}

} // namespace jitfuse
