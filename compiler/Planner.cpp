//===- compiler/Planner.cpp - stage 1 of compile(): the plan --------------===//
#include "compiler/Planner.h"

#include "compiler/Fusion.h"
#include "compiler/Horizontal.h"
#include "compiler/LowerAxes.h"
#include "compiler/Plan.h"
#include "compiler/ReduceAxes.h"
#include "compiler/Schedule.h"
#include "compiler/StreamLoads.h"
#include "ir/Printer.h"
#include "support/Error.h"

namespace jitfuse {

/// ExpectKernels, ExpectLaunches and SameKernel: fail with the plan when they
/// do not hold.
static void checkContract(const Graph &G, const Partition &P, size_t NumLaunches,
                          const PlanOptions &Opts, const std::string &Plan) {
  if (Opts.ExpectKernels && *Opts.ExpectKernels != P.Clusters.size())
    fail("fusion contract broken: expected {} kernel{}, the plan has {}\n{}",
         *Opts.ExpectKernels, *Opts.ExpectKernels == 1 ? "" : "s", P.Clusters.size(), Plan);
  if (Opts.ExpectLaunches && *Opts.ExpectLaunches != NumLaunches)
    fail("fusion contract broken: expected {} launch{}, the plan has {}\n{}",
         *Opts.ExpectLaunches, *Opts.ExpectLaunches == 1 ? "" : "es", NumLaunches, Plan);
  for (const std::vector<NodeId> &Group : Opts.SameKernel) {
    int Want = -2;
    for (NodeId N : Group) {
      if (N >= G.size())
        fail("fusion contract: node %{} is not in the graph", N);
      int C = P.ClusterOf[N];
      if (C < 0)
        fail("fusion contract: node %{} ({}) is not computed by any kernel "
             "(a leaf or dead node)",
             N, opName(G.node(N).Kind).str());
      if (Want == -2)
        Want = C;
      else if (C != Want)
        fail("fusion contract broken: nodes %{} and %{} were required to share "
             "a kernel but are in kernels {} and {}\n{}",
             Group.front(), N, Want, C, Plan);
    }
  }
}

static GraphPlan planView(const Graph &G, const PlanOptions &Opts, GraphPlan R);

GraphPlan planGraph(const Graph &G, const PlanOptions &Opts) {
  G.verify();
  if (G.outputs().empty())
    fail("compile: the graph has no outputs; mark results with g.output(name, value)");
  GraphPlan R;
  R.GraphText = printGraph(G);
  std::optional<Graph> Lowered = lowerReduceAxes(G);
  const Graph &Base = Lowered ? *Lowered : G;
  std::optional<Graph> V = rowViewOfAxes(Base);
  R.Lowered = Lowered.has_value();
  R.RowView = V.has_value();
  if (V)
    R.View = std::make_shared<const Graph>(std::move(*V));
  else if (Lowered)
    R.View = std::make_shared<const Graph>(std::move(*Lowered));
  // The view outlives the move of R: the shared_ptr moves, not the graph.
  const Graph &Planned = R.planned(G);
  return planView(Planned, Opts, std::move(R));
}

/// KernelPlan::SamePhasePeeled off in \p K and its forms.
static void clearSamePhase(KernelPlan &K) {
  if (K.SamePhasePeeled)
    K.Why += "; not the same-phase variant: a part of a horizontal launch";
  K.SamePhasePeeled = false;
  for (std::shared_ptr<const KernelPlan> *Form : {&K.FewRows, &K.WideRows, &K.AlignedCluster})
    if (*Form && (*Form)->SamePhasePeeled) {
      KernelPlan F = **Form;
      F.SamePhasePeeled = false;
      *Form = std::make_shared<const KernelPlan>(std::move(F));
    }
}

/// The partition and schedule of G (the user's graph or its row view).
static GraphPlan planView(const Graph &G, const PlanOptions &Opts, GraphPlan R) {
  R.Part = Opts.Fuse ? fuseGraph(G, Opts.Fusion) : partitionUnfused(G);
  for (unsigned I = 0; I < R.Part.Clusters.size(); ++I) {
    R.Kernels.push_back(scheduleCluster(G, R.Part.Clusters[I], I, Opts.Schedule));
    markStreamLoads(G, R.Kernels.back(), Opts.StreamLoads, Opts.StreamReadOnlyRows);
    R.KernelBytes.push_back(clusterTraffic(G, R.Part.Clusters[I]));
  }
  // Unfused plans keep one launch per op: they are the eager baseline.
  R.Launches = groupLaunches(R.Part, R.Kernels, R.KernelBytes, G.dynamicDims().size(),
                             Opts.Fuse && Opts.Horizontal);
  // A horizontal launch runs its parts' input-led variants for any pointers
  // (codegen::emitHorizontal): not the same-phase one.
  for (const std::vector<unsigned> &L : R.Launches)
    if (L.size() > 1)
      for (unsigned K : L)
        clearSamePhase(R.Kernels[K]);
  R.PlanText = explainPlan(G, R.Part, R.Kernels, R.KernelBytes, Opts.Fuse);
  if (R.RowView)
    R.PlanText = "reductions over inner axes: planned on the row view of the graph "
                 "(their trailing reduced dims merged into one row; shapes below are "
                 "seen through it)\n" +
                 R.PlanText;
  if (R.Lowered)
    R.PlanText = "reductions over outer or mixed axes: planned as row or column reductions "
                 "of a permuted view of their operands (node ids below are the lowered "
                 "graph's)\n" +
                 R.PlanText;
  for (const std::vector<unsigned> &L : R.Launches) {
    SizeSum Bytes;
    for (unsigned K : L)
      Bytes.add(R.KernelBytes[K]);
    R.Splits.push_back(L.size() > 1 && splitsWhenLarge(Bytes, Opts.HorizontalMaxBytes));
    R.LaunchBytes.push_back(std::move(Bytes));
  }
  R.PlanText += explainLaunches(R.Kernels, R.Launches, R.LaunchBytes, R.Splits,
                                Opts.HorizontalMaxBytes, G.dynamicDims());
  R.PlanDot = planToDot(G, R.Part, R.Launches);
  checkContract(G, R.Part, R.Launches.size(), Opts, R.PlanText);
  return R;
}

} // namespace jitfuse
