//===- exec/LaunchTable.cpp - launch plans from the emitted kernels -------===//
//
// At compile time, each kernel's parameters become argument slots that say
// where run() finds the value (a graph input, output, intermediate buffer,
// scalar or dim), so the hot path only copies values and launches.
//
//===----------------------------------------------------------------------===//
#include "exec/ExecutableImpl.h"

#include "runtime/Memory.h"
#include "support/Error.h"

#include <llvm/Support/MathExtras.h>

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

void ExecutableImpl::prepareHotPath() {
  auto AlignMask = [](DType T) {
    unsigned Bytes = dtypeBytes(T);
    JITFUSE_CHECK(llvm::isPowerOf2_32(Bytes), "element sizes are powers of two");
    return uint64_t(Bytes) - 1;
  };
  for (const TensorDesc &T : Inputs)
    InAlignMask.push_back(AlignMask(T.Type));
  for (const TensorDesc &T : Outputs)
    OutAlignMask.push_back(AlignMask(T.Type));
  InNonEmpty.assign(Inputs.size(), 0);
  OutNonEmpty.assign(Outputs.size(), 0);
  ValidDims.reserve(DynDims.size());
  DimsValid = false;
  for (LaunchPlan &L : Launches) {
    JITFUSE_CHECK(!L.Vecs.empty(), "every launch has a variant");
    for (int V : L.Vecs) {
      JITFUSE_CHECK(V > 0 && llvm::isPowerOf2_32(unsigned(V)), "vector widths are powers of two");
      L.VecShift.push_back(static_cast<int>(llvm::Log2_32(unsigned(V))));
    }
    L.Shapes.assign(L.Vecs.size(), std::nullopt);
    for (size_t S = 0; S < L.Slots.size(); ++S) {
      const ArgSlot &A = L.Slots[S];
      unsigned Slot = static_cast<unsigned>(S);
      switch (A.K) {
      case codegen::KernelParam::Input:
      case codegen::KernelParam::Output: {
        if (A.Src.K == TensorSource::Intermediate)
          break; // ours: written when the dims change, always aligned
        bool IsOut = A.Src.K == TensorSource::GraphOutput;
        L.PerCall.push_back({IsOut ? CallSlot::OutPtr : CallSlot::InPtr, A.Type, Slot,
                             A.Src.Index});
        if (A.Vectorized) {
          JITFUSE_CHECK(llvm::isPowerOf2_32(A.ElemBytes), "element sizes are powers of two");
          L.Align.push_back(
              {IsOut, A.Src.Index, static_cast<int>(llvm::Log2_32(A.ElemBytes))});
        }
        break;
      }
      case codegen::KernelParam::Scalar:
        L.PerCall.push_back({CallSlot::ScalarValue, A.Type, Slot, A.Index});
        break;
      case codegen::KernelParam::DynDim:
      case codegen::KernelParam::Partials:
      case codegen::KernelParam::Counter:
        break; // written when the dims change
      }
    }
  }
}

} // namespace jitfuse
