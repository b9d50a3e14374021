//===- codegen/RowCombine.cpp - a row kernel's stage results --------------===//
//
// The end of a row kernel's reduction stage: each thread's accumulators
// combined over the block (two barriers for all of them when the plan says
// JointReduce), over a cluster's blocks in rank order through distributed
// shared memory when the row is split, and paired reductions' row results
// (online softmax's max and sum, Welford's mean and variance) taken from
// their combined pair.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"

#include "codegen/Spelling.h"

#include <fmt/format.h>

namespace jitfuse::codegen {

/// Paired reductions' accumulator type: (max, rescaled sum) for online
/// softmax, (count, mean, M2) for Welford.
std::string pairType(bool Welford, DType T) {
  return fmt::format("{}<{}>", Welford ? "jf_wf" : "jf_ms", computeType(T));
}
/// Its identity: (-inf, 0), or (0, 0, 0).
std::string pairIdentity(bool Welford, DType T) {
  if (Welford)
    return fmt::format("{0}{{{1}, {1}, {1}}}", pairType(true, T), literal(0, T));
  return fmt::format("{}{{{}, {}}}", pairType(false, T), reduceIdentity(Op::ReduceMax, T),
                     literal(0, T));
}

void KernelWriter::rowStageResults(llvm::ArrayRef<NodeId> Reds) {
  // KernelPlan::JointReduce: two or more block reductions of the stage
  // share two barriers; each result is then its scratch's last slot. A
  // pair's First carries both of its values (accp); its Second has none.
  // One reduction keeps jf_block_reduce: ptxas allocated softmax f32
  // x 14336's cached row differently around the split form and spilled.
  std::vector<NodeId> Own;
  for (NodeId N : Reds)
    if (!pairSecond(N))
      Own.push_back(N);
  // Two rows an iteration (twoRows) share the two barriers always.
  bool Joint = (P.JointReduce || twoRows()) && P.ThreadsX > 32 && P.ClusterX == 1 &&
               (Own.size() > 1 || (twoRows() && !Own.empty()));
  // Reduction N's accumulator, operator and identity: a pair's, or its own.
  auto AccOf = [&](NodeId N) { return fmt::format("acc{}{}", pairOf(N) ? "p" : "", N); };
  auto OpOf = [&](NodeId N) {
    const RowPair *RP = pairOf(N);
    if (!RP)
      return reduceFunctor(G.node(N).Kind);
    return fmt::format("{}<{}>()", RP->Welford ? "jf_welford_op" : "jf_online_op",
                       computeType(G.node(N).Type));
  };
  auto IdentityOf = [&](NodeId N) {
    const RowPair *RP = pairOf(N);
    return RP ? pairIdentity(RP->Welford, G.node(N).Type)
              : reduceIdentity(G.node(N).Kind, G.node(N).Type);
  };
  // Reduction N's value over the row's threads (a cluster's block: over
  // the block's).
  auto ReducedOf = [&](NodeId N) {
    if (Joint)
      return fmt::format("{}[{}]", rowScratch(N), P.ThreadsX / 32);
    if (P.ThreadsX <= 32)
      return fmt::format("jf_group_reduce<{}>({}, {})", P.ThreadsX, AccOf(N), OpOf(N));
    // ThreadsAtLaunch: the block's warps from blockDim.x, the result in the
    // slot of ThreadsX (the most the launch picks).
    return fmt::format("jf_block_reduce{}<{}>({}, {}, {}, {})", P.ThreadsAtLaunch ? "_n" : "",
                       P.ThreadsX, AccOf(N), OpOf(N), IdentityOf(N), rowScratch(N));
  };
  if (Joint) {
    rowSegment([&] {
      for (NodeId N : Own)
        E.line(fmt::format("jf_block_partial({}, {}, {});", AccOf(N), OpOf(N), rowScratch(N)));
    });
    E.line("__syncthreads();");
    rowSegment([&] {
      for (NodeId N : Own)
        E.line(fmt::format("jf_block_combine{}<{}>({}, {}, {});",
                           P.ThreadsAtLaunch ? "_n" : "", P.ThreadsX, OpOf(N),
                           IdentityOf(N), rowScratch(N)));
    });
    E.line("__syncthreads();");
  }
  const size_t ResultMark = E.text().size();
  // A pair's row results from its reduced value rp<N>. Online softmax:
  // the row's sum is NaN when its max is -inf, as in the two-loop order.
  // Welford: the variance is M2 over the row length, as mean() is.
  auto PairResults = [&](NodeId N, const RowPair &RP) {
    std::string AT = computeType(G.node(N).Type);
    if (RP.Welford) {
      E.line(fmt::format("const {} red{} = rp{}.Mean;", AT, N, N));
      E.line(fmt::format("const {0} red{1} = rp{2}.M2 / ({0})R;", AT, RP.Second, N));
    } else {
      E.line(fmt::format("const {} red{} = rp{}.M;", AT, N, N));
      E.line(fmt::format("const {} red{} = jf_online_sum(rp{}, R);", AT, RP.Second, N));
    }
    E.setReduced(N, "red" + std::to_string(N));
    E.setReduced(RP.Second, "red" + std::to_string(RP.Second));
  };
  for (NodeId N : Reds) {
    const Node &Nd = G.node(N);
    std::string AT = computeType(Nd.Type);
    if (pairSecond(N))
      continue; // reduced with the pair's First
    if (const RowPair *RP = pairOf(N)) {
      // Pairs combine like the per-thread values; over a cluster, each
      // block's pair to its slot, combined after the barrier below.
      std::string PT = pairType(RP->Welford, Nd.Type);
      if (P.ClusterX > 1) {
        E.line(fmt::format("const {} blk{} = {};", PT, N, ReducedOf(N)));
        E.line(fmt::format("if (tx == 0) jf_cl{0} = blk{0};", N));
        continue;
      }
      E.line(fmt::format("const {} rp{} = {};", PT, N, ReducedOf(N)));
      PairResults(N, *RP);
      continue;
    }
    std::string Red = ReducedOf(N);
    if (P.ClusterX > 1) {
      // Each block's result to its slot; after the cluster barrier every
      // block combines all slots in rank order (the same value in each).
      E.line(fmt::format("const {} blk{} = {};", AT, N, Red));
      E.line(fmt::format("if (tx == 0) jf_cl{0} = blk{0};", N));
      continue;
    }
    if (Nd.Kind == Op::ReduceMean)
      Red = fmt::format("{} / ({})R", Red, AT);
    E.line(fmt::format("const {} red{} = {};", AT, N, Red));
    E.setReduced(N, "red" + std::to_string(N));
  }
  if (P.ClusterX > 1) {
    E.line("jf_cluster_sync();");
    for (NodeId N : Reds) {
      const Node &Nd = G.node(N);
      std::string AT = computeType(Nd.Type);
      if (pairSecond(N))
        continue;
      if (const RowPair *RP = pairOf(N)) {
        // The blocks' pairs in rank order, as the single values below.
        E.line(fmt::format("{} rp{} = jf_dsm_load(&jf_cl{}, 0u);",
                           pairType(RP->Welford, Nd.Type), N, N));
        for (int K = 1; K < P.ClusterX; ++K)
          E.line(fmt::format("rp{0} = {1}(rp{0}, jf_dsm_load(&jf_cl{0}, {2}u));", N, OpOf(N),
                             K));
        PairResults(N, *RP);
        continue;
      }
      E.line(fmt::format("{} red{} = jf_dsm_load(&jf_cl{}, 0u);", AT, N, N));
      for (int K = 1; K < P.ClusterX; ++K)
        E.line(fmt::format("red{0} = {1}(red{0}, jf_dsm_load(&jf_cl{0}, {2}u));", N,
                           reduceFunctor(Nd.Kind), K));
      if (Nd.Kind == Op::ReduceMean)
        E.line(fmt::format("red{0} = red{0} / ({1})R;", N, AT));
      E.setReduced(N, "red" + std::to_string(N));
    }
  }
  secondRowFrom(ResultMark);
}

} // namespace jitfuse::codegen
