//===- exec/ExecutableGraph.cpp - run() as one CUDA graph replay ----------===//
//
// Graph mode (Executable::setCudaGraph). The graph has one kernel node per
// LaunchPlan, each depending on the previous one (the order direct launches
// have on one stream). It is built from the first graph-mode run's prepared
// launches and instantiated once. Every later run prepares each launch
// exactly as direct mode does (variant, grid, 8-byte argument slots) and
// compares the result with what the instance holds for that node:
//
//   - equal (function, grid, block, argument bytes): nothing to do;
//   - different: cuGraphExecKernelNodeSetParams for that node only. Pointers,
//     scalars, dims, the grid and the vector variant (function) may all
//     change this way;
//   - no elements (direct mode skips the launch): cuGraphNodeSetEnabled(0);
//     the node is enabled again, with fresh parameters, when it has work.
//
// The topology never changes, so nothing is ever replayed with stale
// arguments and the instance is never rebuilt, except when a driver refuses
// to change a node's function in place (drivers before the CUDA 12
// semantics): then the graph is built and instantiated afresh. A launch
// that runs its parts one by one at large dims (LaunchPlan::Alone) changes
// the topology: each such form has a graph of its own, built at its first
// run (disabled nodes cost 0.3 us each in a replay, so the other form's
// nodes are left out rather than disabled). When nothing
// changed, a run is checkArgs + the comparisons + one cuGraphLaunch, with no
// allocation.
//
//===----------------------------------------------------------------------===//
#include "exec/ExecutableImpl.h"

#include "runtime/Driver.h"
#include "support/Error.h"

#include <algorithm>

namespace jitfuse {

void Executable::setCudaGraph(bool On) {
  Impl->setCudaGraph(On);
  if (Impl->Unmixed)
    Impl->Unmixed->setCudaGraph(On);
}
bool Executable::cudaGraph() const { return Impl->UseCudaGraph; }
const CudaGraphStats &Executable::cudaGraphStats() const { return Impl->GraphStats; }

LaunchGraph::~LaunchGraph() {
  if (!Exec && !Graph)
    return;
  // Never throws: a graph exists only when the driver is available. An
  // instance still in flight is freed by the driver when it completes.
  const rt::DriverApi &Api = rt::Driver::get().api();
  if (Exec)
    (void)Api.cuGraphExecDestroy(Exec);
  if (Graph)
    (void)Api.cuGraphDestroy(Graph);
}

void ExecutableImpl::setCudaGraph(bool On) {
  if (On && HaveDevice) {
    const rt::Driver &D = rt::Driver::get();
    const rt::DriverApi &Api = D.api();
    if (!Api.cuGraphAddKernelNode || !Api.cuGraphExecKernelNodeSetParams ||
        !Api.cuGraphNodeSetEnabled)
      fail("setCudaGraph: the CUDA driver (version {}) lacks cuGraphAddKernelNode_v2 / "
           "cuGraphExecKernelNodeSetParams_v2 (CUDA 12.0) or cuGraphNodeSetEnabled (11.6); "
           "run without CUDA graphs or update the driver",
           D.version());
  }
  UseCudaGraph = On;
  if (!On)
    CudaGraphs.clear();
}

static bool sameDims(const rt::LaunchDims &A, const rt::LaunchDims &B) {
  return A.X == B.X && A.Y == B.Y && A.Z == B.Z;
}

static CUDA_KERNEL_NODE_PARAMS nodeParams(CUfunction Fn, const rt::LaunchDims &Grid,
                                          const rt::LaunchDims &Block, unsigned SharedBytes,
                                          LaunchPlan &L) {
  CUDA_KERNEL_NODE_PARAMS P{};
  P.func = Fn;
  P.gridDimX = Grid.X;
  P.gridDimY = Grid.Y;
  P.gridDimZ = Grid.Z;
  P.blockDimX = Block.X;
  P.blockDimY = Block.Y;
  P.blockDimZ = Block.Z;
  P.sharedMemBytes = SharedBytes;
  P.kernelParams = L.ArgPtrs.data(); // the driver copies the values
  return P;
}

/// Throws, naming the kernel, unless R is CUDA_SUCCESS. The message is only
/// formatted on failure.
static void checkNode(CUresult R, const char *What, const LaunchPlan &L) {
  if (R != CUDA_SUCCESS)
    rt::Driver::get().check(R, fmt::format("{} (kernel '{}')", What, L.Name));
}

void ExecutableImpl::buildGraph(llvm::ArrayRef<CUdeviceptr> In,
                                llvm::ArrayRef<CUdeviceptr> Out, llvm::ArrayRef<double> Sc) {
  if (CudaGraphs.size() <= GraphForm)
    CudaGraphs.resize(GraphForm + 1);
  CudaGraphs[GraphForm].reset();
  const rt::Driver &D = rt::Driver::get();
  const rt::DriverApi &Api = D.api();
  auto G = std::make_unique<LaunchGraph>();
  D.check(Api.cuGraphCreate(&G->Graph, 0), "cuGraphCreate");
  forEachPlan(Launches, [&](LaunchPlan &L) {
    if (L.Active)
      G->Plans.push_back(&L);
  });
  G->Nodes.resize(G->Plans.size());
  for (size_t I = 0; I < G->Plans.size(); ++I) {
    LaunchPlan &L = *G->Plans[I];
    GraphNodeState &N = G->Nodes[I];
    PreparedLaunch P = prepareLaunch(L, In, Out, Sc);
    // A skipped launch still gets its node (disabled below), with a valid
    // configuration; it is given real parameters before it is enabled. A
    // split launch's part compiles in the background (driver splitVariants).
    if (P.Skip && !L.Fns.front())
      loadDeferred();
    N.Fn = P.Skip ? L.Fns.front() : P.Fn;
    N.Grid = P.Skip ? rt::LaunchDims{} : P.Grid;
    N.Block = P.Block;
    N.SharedBytes = P.SharedBytes;
    N.Enabled = !P.Skip;
    N.Args = L.Storage;
    CUDA_KERNEL_NODE_PARAMS KP = nodeParams(N.Fn, N.Grid, N.Block, N.SharedBytes, L);
    const CUgraphNode *Dep = I ? &G->Nodes[I - 1].Node : nullptr;
    checkNode(Api.cuGraphAddKernelNode(&N.Node, G->Graph, Dep, I ? 1 : 0, &KP),
              "cuGraphAddKernelNode", L);
  }
  D.check(Api.cuGraphInstantiateWithFlags(&G->Exec, G->Graph, 0), "cuGraphInstantiateWithFlags");
  for (size_t I = 0; I < G->Nodes.size(); ++I)
    if (!G->Nodes[I].Enabled)
      checkNode(Api.cuGraphNodeSetEnabled(G->Exec, G->Nodes[I].Node, 0),
                "cuGraphNodeSetEnabled", *G->Plans[I]);
  CudaGraphs[GraphForm] = std::move(G);
  ++GraphStats.Instantiations;
}

void ExecutableImpl::runGraph(llvm::ArrayRef<CUdeviceptr> In, llvm::ArrayRef<CUdeviceptr> Out,
                              llvm::ArrayRef<double> Sc, CUstream Stream) {
  if (Launches.empty())
    return; // as direct mode: nothing to enqueue
  const rt::Driver &D = rt::Driver::get();
  const rt::DriverApi &Api = D.api();
  if (GraphForm >= CudaGraphs.size() || !CudaGraphs[GraphForm]) {
    buildGraph(In, Out, Sc);
  } else {
    LaunchGraph &G = *CudaGraphs[GraphForm];
    for (size_t I = 0; I < G.Plans.size(); ++I) {
      LaunchPlan &L = *G.Plans[I];
      GraphNodeState &N = G.Nodes[I];
      PreparedLaunch P = prepareLaunch(L, In, Out, Sc);
      if (P.Skip) {
        if (N.Enabled) {
          checkNode(Api.cuGraphNodeSetEnabled(G.Exec, N.Node, 0), "cuGraphNodeSetEnabled", L);
          N.Enabled = false;
          ++GraphStats.NodeToggles;
        }
        continue;
      }
      bool Same = P.Fn == N.Fn && sameDims(P.Grid, N.Grid) && sameDims(P.Block, N.Block) &&
                  P.SharedBytes == N.SharedBytes &&
                  std::equal(L.Storage.begin(), L.Storage.end(), N.Args.begin());
      if (!Same) {
        CUDA_KERNEL_NODE_PARAMS KP = nodeParams(P.Fn, P.Grid, P.Block, P.SharedBytes, L);
        CUresult R = Api.cuGraphExecKernelNodeSetParams(G.Exec, N.Node, &KP);
        if (R != CUDA_SUCCESS && P.Fn != N.Fn) {
          // An older driver may refuse a new function in place: rebuild
          // from these arguments (the remaining nodes are prepared there).
          buildGraph(In, Out, Sc);
          break;
        }
        checkNode(R, "cuGraphExecKernelNodeSetParams", L);
        N.Fn = P.Fn;
        N.Grid = P.Grid;
        N.Block = P.Block;
        N.SharedBytes = P.SharedBytes;
        std::copy(L.Storage.begin(), L.Storage.end(), N.Args.begin());
        ++GraphStats.NodeUpdates;
      }
      if (!N.Enabled) {
        checkNode(Api.cuGraphNodeSetEnabled(G.Exec, N.Node, 1), "cuGraphNodeSetEnabled", L);
        N.Enabled = true;
        ++GraphStats.NodeToggles;
      }
    }
  }
  D.check(Api.cuGraphLaunch(CudaGraphs[GraphForm]->Exec, Stream), "cuGraphLaunch");
  ++GraphStats.Replays;
}

} // namespace jitfuse
