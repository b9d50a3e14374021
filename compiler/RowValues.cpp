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

/// Ops whose recomputation in a later loop costs more than keeping their
/// value: library calls and divisions (softmax's exp is ~8 instructions an
/// element, and a row kernel computed it once per stage).
static bool costlyToRecompute(Op K) {
  const OpInfo &I = opInfo(K);
  if (I.Kind == OpKind::Unary)
    return I.Bound == BoundRule::Rule && K != Op::Cast && K != Op::Not;
  return K == Op::Div || K == Op::Pow || K == Op::Mod;
}

int64_t keptValueBytes(const Graph &G, NodeId N) {
  // codegen's kv arrays hold the compute type: f32 for 16-bit floats.
  return G.node(N).Type == DType::F64 ? 8 : 4;
}

/// The loops that evaluate each node of row cluster \p C (and each input
/// they load), in the order codegen emits the loops: each reduction stage's
/// (its reductions' operand cones), then the epilogue's (the whole-row
/// outputs' cones). A walk stops at reductions (a row's reduced value), at
/// inputs (a load) and, when \p Cut is given, at a value of Cut that an
/// earlier loop computed (read from its registers).
static std::map<NodeId, std::set<int>> loopsOf(const Graph &G, const Cluster &C,
                                               llvm::ArrayRef<Dim> Domain,
                                               const std::set<NodeId> *Cut = nullptr) {
  std::map<NodeId, int> Stage = reductionStages(G, C.Nodes);
  int Epilogue = 0;
  for (auto &[N, S] : Stage)
    Epilogue = std::max(Epilogue, S + 1);
  std::vector<std::vector<NodeId>> Roots(Epilogue + 1);
  for (NodeId N : C.Nodes)
    if (auto It = Stage.find(N); It != Stage.end())
      Roots[It->second].push_back(G.node(N).Operands[0]);
  for (NodeId O : C.Outputs)
    if (sameNumel(G.node(O).Dims, Domain))
      Roots[Epilogue].push_back(O);
  std::set<NodeId> InCluster(C.Nodes.begin(), C.Nodes.end());
  std::map<NodeId, std::set<int>> Loops;
  std::set<NodeId> Computed;
  for (int Loop = 0; Loop <= Epilogue; ++Loop) {
    std::set<NodeId> KeptHere;
    std::vector<NodeId> Work = Roots[Loop];
    while (!Work.empty()) {
      NodeId N = Work.back();
      Work.pop_back();
      if (!Loops[N].insert(Loop).second || !InCluster.count(N) || isReduction(G.node(N).Kind))
        continue;
      if (Cut && Cut->count(N)) {
        if (Computed.count(N))
          continue;
        KeptHere.insert(N);
      }
      for (NodeId O : G.node(N).Operands)
        Work.push_back(O);
    }
    Computed.insert(KeptHere.begin(), KeptHere.end());
  }
  return Loops;
}

std::vector<NodeId> valuesToKeep(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
  std::map<NodeId, std::set<int>> Loops = loopsOf(G, C, Domain);
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
  std::set<NodeId> StagedNodes;
  int64_t InputBytes = 0;
  for (unsigned I : Staged)
    if (StagedNodes.insert(C.Inputs[I]).second)
      InputBytes += dtypeBytes(G.node(C.Inputs[I]).Type);
  if (StagedNodes.empty())
    return {};
  std::map<NodeId, std::set<int>> Loops = loopsOf(G, C, Domain);
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
    ValueBytes += keptValueBytes(G, N);
  }
  if (Keep.empty() || ValueBytes >= InputBytes)
    return {};
  // With the values kept, every stage input must be read in one loop only.
  std::map<NodeId, std::set<int>> CutLoops = loopsOf(G, C, Domain, &Cut);
  for (NodeId I : StagedNodes)
    if (CutLoops[I].size() > 1)
      return {};
  return Keep;
}

} // namespace jitfuse
