//===- exec/LaunchTable.cpp - launch plans from the emitted kernels -------===//
//
// At compile time, each kernel's parameters become argument slots that say
// where run() finds the value (a graph input, output, intermediate buffer,
// scalar or dim), so the hot path only copies values and launches.
//
//===----------------------------------------------------------------------===//
#include "exec/ExecutableImpl.h"

#include "runtime/Memory.h"

#include <algorithm>
#include <map>

namespace jitfuse {

namespace {

/// Where the tensor of node \p N comes from at run time; a node that is
/// neither a graph input nor an output gets the next intermediate buffer.
TensorSource sourceOf(const Graph &G, NodeId N, std::map<NodeId, unsigned> &Inter,
                      ExecutableImpl &X) {
  const Node &Nd = G.node(N);
  if (Nd.Kind == Op::Input)
    return {TensorSource::GraphInput, static_cast<unsigned>(Nd.A0)};
  for (size_t I = 0; I < G.outputs().size(); ++I)
    if (G.outputs()[I].Id == N)
      return {TensorSource::GraphOutput, static_cast<unsigned>(I)};
  auto [It, New] = Inter.try_emplace(N, static_cast<unsigned>(Inter.size()));
  if (New) {
    X.InterNumel.push_back(SizeExpr::of(Nd.Dims, G.dynamicDims()));
    X.InterElemBytes.push_back(dtypeBytes(Nd.Type));
  }
  return {TensorSource::Intermediate, It->second};
}

LaunchPlan makeLaunch(const Graph &G, const KernelPlan &K, const codegen::EmittedKernel &E,
                      std::map<NodeId, unsigned> &Inter, ExecutableImpl &X) {
  LaunchPlan L(E.Launch);
  for (const codegen::EmittedKernel::Variant &V : E.Variants)
    L.Vecs.push_back(V.Vec);
  auto Names = G.dynamicDims();
  L.Numel = SizeExpr::of(K.Domain, Names);
  if (!K.Domain.empty()) {
    L.Rows = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).drop_back(), Names);
    L.RowLen = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).take_back(), Names);
  }
  for (const codegen::KernelParam &P : E.Params) {
    ArgSlot S;
    S.K = P.K;
    S.Type = P.Type;
    S.ElemBytes = dtypeBytes(P.Type);
    switch (P.K) {
    case codegen::KernelParam::Input:
    case codegen::KernelParam::Output: {
      NodeId N = P.K == codegen::KernelParam::Input ? K.Inputs[P.Index] : K.Outputs[P.Index];
      S.Src = sourceOf(G, N, Inter, X);
      // A one-element tensor is read as a scalar whatever the variant.
      S.Vectorized = staticNumel(G.node(N).Dims) != std::optional<int64_t>(1);
      S.AlignElems = S.Vectorized ? L.Vecs.front() : 1;
      break;
    }
    case codegen::KernelParam::Scalar:
      S.Index = static_cast<unsigned>(G.node(K.Scalars[P.Index]).A0);
      break;
    case codegen::KernelParam::DynDim:
      S.Index = static_cast<unsigned>(
          std::find(Names.begin(), Names.end(), K.DynDims[P.Index]) - Names.begin());
      break;
    case codegen::KernelParam::Partials:
    case codegen::KernelParam::Counter:
      break;
    }
    L.Slots.push_back(S);
  }
  L.Storage.assign(L.Slots.size(), 0);
  for (uint64_t &Slot : L.Storage)
    L.ArgPtrs.push_back(&Slot);
  return L;
}

} // namespace

void ExecutableImpl::buildLaunches(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                                   llvm::ArrayRef<codegen::EmittedKernel> Emitted) {
  std::map<NodeId, unsigned> Inter;
  for (size_t I = 0; I < Plans.size(); ++I) {
    Launches.push_back(makeLaunch(G, Plans[I], Emitted[I], Inter, *this));
    for (const codegen::EmittedKernel::Variant &V : Emitted[I].Variants)
      Launches.back().FnNames.push_back(V.Name);
  }
  InterBuffers.resize(InterNumel.size());
}

void ExecutableImpl::bindFunctions() {
  for (LaunchPlan &L : Launches) {
    L.Fns.clear();
    for (const std::string &Name : L.FnNames)
      L.Fns.push_back(Mod->function(Name));
    if (unsigned Blocks = L.Rule.maxBlocks(SmCount)) {
      L.Partials = rt::DeviceBuffer(size_t(Blocks) * 8);
      L.Counter = rt::DeviceBuffer(sizeof(unsigned));
      rt::memsetD8(L.Counter.ptr(), 0, sizeof(unsigned));
    }
  }
}

} // namespace jitfuse
