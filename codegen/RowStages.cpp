//===- codegen/RowStages.cpp - a row kernel's reduction stages and pairs --===//
//
// Which reductions of a row kernel can share a walk of the row (a stage:
// those whose operands need no earlier reduction of the same walk), and
// which pairs of reductions combine into one (online softmax's max and sum,
// Welford's mean and variance). The scheduler sizes registers by them, the
// code generator emits a loop per stage.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelPlan.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>

std::map<jitfuse::NodeId, int> jitfuse::reductionStages(const Graph &G,
                                                        llvm::ArrayRef<NodeId> Nodes) {
  return reductionStages(G, Nodes, {});
}

std::map<jitfuse::NodeId, int>
jitfuse::reductionStages(const Graph &G, llvm::ArrayRef<NodeId> Nodes,
                         llvm::ArrayRef<RowPair> Pairs) {
  std::map<NodeId, NodeId> FirstOf;
  for (const RowPair &RP : Pairs)
    FirstOf[RP.Second] = RP.First;
  std::map<NodeId, int> Avail, Stage;
  for (NodeId N : Nodes) {
    int A = 0;
    for (NodeId O : G.node(N).Operands)
      if (auto It = Avail.find(O); It != Avail.end())
        A = std::max(A, It->second);
    if (auto It = FirstOf.find(N); It != FirstOf.end())
      A = Stage.at(It->second);
    if (isReduction(G.node(N).Kind)) {
      Stage[N] = A;
      A += 1;
    }
    Avail[N] = A;
  }
  return Stage;
}

int jitfuse::stageCount(const std::map<NodeId, int> &Stages) {
  int N = 0;
  for (const auto &[Node, S] : Stages)
    N = std::max(N, S + 1);
  return N;
}

std::vector<jitfuse::RowPair> jitfuse::rowPairs(const Graph &G, llvm::ArrayRef<NodeId> Nodes,
                                                llvm::ArrayRef<NodeId> Outputs, bool Online,
                                                bool Welford) {
  auto RowReduce = [&](NodeId N, Op K, DType T) {
    const Node &Nd = G.node(N);
    return Nd.Kind == K && Nd.scope() == ReduceScope::LastAxis && Nd.Type == T &&
           llvm::is_contained(Nodes, N);
  };
  std::vector<RowPair> Pairs;
  for (NodeId S : Nodes) {
    const Node &Sec = G.node(S);
    bool IsWelford = Sec.Kind == Op::ReduceMean;
    if ((IsWelford ? !Welford : (!Online || Sec.Kind != Op::ReduceSum)) ||
        Sec.scope() != ReduceScope::LastAxis ||
        (Sec.Type != DType::F32 && Sec.Type != DType::F64))
      continue;
    // Softmax: exp(D); Welford: D * D. Either way D = A - First.
    const Node &Op0 = G.node(Sec.Operands[0]);
    if (Op0.Type != Sec.Type ||
        (IsWelford ? Op0.Kind != Op::Mul || Op0.Operands[0] != Op0.Operands[1]
                   : Op0.Kind != Op::Exp))
      continue;
    const Node &D = G.node(Op0.Operands[0]);
    if (D.Kind != Op::Sub || D.Type != Sec.Type)
      continue;
    NodeId A = D.Operands[0], First = D.Operands[1];
    if (!RowReduce(First, IsWelford ? Op::ReduceMean : Op::ReduceMax, Sec.Type) ||
        G.node(First).Operands[0] != A || (IsWelford && llvm::is_contained(Outputs, First)))
      continue;
    Pairs.push_back({First, S, IsWelford});
  }
  return Pairs;
}
