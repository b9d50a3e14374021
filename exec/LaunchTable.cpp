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

/// Appends the slots of kernel \p K's parameters \p Params to \p Slots;
/// vectorized tensors need \p WidestVec elements of alignment.
void appendSlots(const Graph &G, const KernelPlan &K,
                 llvm::ArrayRef<codegen::KernelParam> Params, int WidestVec,
                 std::map<NodeId, unsigned> &Inter, ExecutableImpl &X,
                 std::vector<ArgSlot> &Slots, std::vector<SizeExpr> &StrideAlign) {
  auto Names = G.dynamicDims();
  for (const codegen::KernelParam &P : Params) {
    ArgSlot S;
    S.K = P.K;
    S.Type = P.Type;
    S.ElemBytes = dtypeBytes(P.Type);
    switch (P.K) {
    case codegen::KernelParam::Input:
    case codegen::KernelParam::Output: {
      NodeId N = P.K == codegen::KernelParam::Input ? K.Inputs[P.Index] : K.Outputs[P.Index];
      S.Src = sourceOf(G, N, Inter, X);
      // A one-element tensor is read as a scalar whatever the variant; a
      // column reduction stores its [C] output one element a thread (and an
      // output of its [R, C] domain, ColumnReducePrologueOutputs, a vector).
      S.Vectorized = staticNumel(G.node(N).Dims) != std::optional<int64_t>(1) &&
                     !(K.Kind == KernelKind::ColumnReduce &&
                       P.K == codegen::KernelParam::Output &&
                       G.node(N).Dims != K.Domain);
      // A strided tensor is only read or written in vectors along a last
      // stride of 1, and the wide variants need its dynamic outer strides
      // to be multiples of their width (codegen: Emitter::stridedRowsAligned).
      if (llvm::ArrayRef<Dim> St = G.stridesOf(N); !St.empty()) {
        S.Vectorized = S.Vectorized && St.back().isStatic(1);
        if (S.Vectorized)
          for (const Dim &D : St.drop_back())
            if (D.isDynamic())
              StrideAlign.push_back(SizeExpr::of(llvm::ArrayRef<Dim>(D), Names));
      }
      S.AlignElems = S.Vectorized ? WidestVec : 1;
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
    case codegen::KernelParam::BlockOffset:
      break;
    }
    Slots.push_back(S);
  }
}

/// A transpose kernel's wide variant reads whole chunks along the domain's
/// last axis and along the operand's (the domain's second to last): both
/// sizes must be multiples of its width (codegen/TransposeKernel.cpp).
void tileAlign(const Graph &G, const KernelPlan &K, std::vector<SizeExpr> &Align) {
  if (K.TransposeNode < 0 || K.Vecs.front() == 1)
    return;
  auto Names = G.dynamicDims();
  llvm::ArrayRef<Dim> D(K.Domain);
  Align.push_back(SizeExpr::of(D.take_back(1), Names));
  Align.push_back(SizeExpr::of(D.take_back(2).take_front(1), Names));
}

/// The iteration sizes of kernel \p K as polynomials in the dynamic dims.
template <typename T> void domainSizes(const Graph &G, const KernelPlan &K, T &Out) {
  auto Names = G.dynamicDims();
  Out.Numel = SizeExpr::of(K.Domain, Names);
  if (!K.Domain.empty()) {
    Out.Rows = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).drop_back(), Names);
    Out.RowLen = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).take_back(), Names);
  }
}

void finishSlots(LaunchPlan &L) {
  L.Storage.assign(L.Slots.size(), 0);
  for (uint64_t &Slot : L.Storage)
    L.ArgPtrs.push_back(&Slot);
}

/// The pointers that pick kernel \p K's output-led variant, when \p E has
/// one (KernelPlan::OutputLedVariant); \p Slots are E's parameters'.
std::optional<LeadPhases> leadPhases(const Graph &G, const KernelPlan &K,
                                     const codegen::EmittedKernel &E,
                                     llvm::ArrayRef<ArgSlot> Slots) {
  size_t N = E.plainVariants();
  if (N < 2 || !E.Variants[N - 1].OutputLed)
    return std::nullopt;
  codegen::PeelLeads Leads = codegen::peelLeads(G, K);
  JITFUSE_CHECK(Leads.Input >= 0 && Leads.Output >= 0 && Slots.size() == E.Params.size(),
                "an output-led variant has an input and an output to follow");
  auto Check = [&](codegen::KernelParam::Kind Kind, int Index) -> std::optional<AlignCheck> {
    for (size_t S = 0; S < E.Params.size(); ++S) {
      if (E.Params[S].K != Kind || E.Params[S].Index != static_cast<unsigned>(Index))
        continue;
      const ArgSlot &A = Slots[S];
      if (A.Src.K == TensorSource::Intermediate)
        return std::nullopt;
      return AlignCheck{A.Src.K == TensorSource::GraphOutput, A.Src.Index,
                        static_cast<int>(llvm::Log2_32(A.ElemBytes))};
    }
    JITFUSE_CHECK(false, "a lead tensor is a parameter of its kernel");
    return std::nullopt;
  };
  LeadPhases Out{Check(codegen::KernelParam::Input, Leads.Input),
                 Check(codegen::KernelParam::Output, Leads.Output),
                 static_cast<uint64_t>(E.Variants[N - 1].Vec - 1),
                 {}};
  codegen::SamePhaseTensors Same = codegen::samePhaseTensors(G, K);
  for (int I : Same.Inputs)
    Out.Same.push_back(Check(codegen::KernelParam::Input, I));
  for (int O : Same.Outputs)
    Out.Same.push_back(Check(codegen::KernelParam::Output, O));
  return Out;
}

LaunchPlan makeLaunch(const Graph &G, const KernelPlan &K, const codegen::EmittedKernel &E,
                      std::map<NodeId, unsigned> &Inter, ExecutableImpl &X) {
  LaunchPlan L(E.Launch);
  L.Name = K.Name;
  for (const codegen::EmittedKernel::Variant &V : E.Variants)
    L.Vecs.push_back(V.Vec);
  L.NumPlain = E.plainVariants();
  L.FewRule = E.FewRowsLaunch;
  L.WideRule = E.WideRowsLaunch;
  L.AlignedRule = E.AlignedClusterLaunch;
  L.AlignedOverWide = E.AlignedClusterOverWide;
  L.NumSplit = E.splitVariants();
  domainSizes(G, K, L);
  appendSlots(G, K, E.Params, L.Vecs.front(), Inter, X, L.Slots, L.StrideAlign);
  tileAlign(G, K, L.StrideAlign);
  L.Lead = leadPhases(G, K, E, L.Slots);
  finishSlots(L);
  return L;
}

/// A horizontal launch of kernels \p Group, emitted as \p E from their own
/// emitted forms \p PartEmitted.
LaunchPlan makeHorizontalLaunch(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                                llvm::ArrayRef<unsigned> Group,
                                llvm::ArrayRef<codegen::EmittedKernel> PartEmitted,
                                const codegen::EmittedKernel &E,
                                std::map<NodeId, unsigned> &Inter, ExecutableImpl &X) {
  LaunchPlan L(E.Launch);
  L.Name = E.Variants.front().Name;
  L.Name.erase(L.Name.rfind('_')); // the variant suffix
  for (const codegen::EmittedKernel::Variant &V : E.Variants)
    L.Vecs.push_back(V.Vec);
  L.NumPlain = L.Vecs.size();
  for (unsigned I : Group) {
    const KernelPlan &K = Plans[I];
    const codegen::EmittedKernel &PE = PartEmitted[I];
    LaunchPart P(PE.Launch);
    // Only the part's plain variants are in the horizontal kernel: its
    // few-rows and wide forms launch alone. Counted in, they let a
    // misaligned pointer pick "variant" 1 or 2 of a peeled-only part, past
    // the launch's own variants (a host crash in prepareLaunch).
    for (size_t V = 0; V < PE.sharedVariants(); ++V)
      P.Vecs.push_back(PE.Variants[V].Vec);
    domainSizes(G, K, P);
    P.SlotBegin = static_cast<unsigned>(L.Slots.size());
    appendSlots(G, K, PE.Params, P.Vecs.front(), Inter, X, L.Slots, P.StrideAlign);
    tileAlign(G, K, P.StrideAlign);
    P.SlotEnd = static_cast<unsigned>(L.Slots.size());
    L.MaxThreads = std::max(L.MaxThreads, static_cast<unsigned>(K.ThreadsX * K.RowsPerBlock));
    L.Parts.push_back(std::move(P));
  }
  // The parameters emitHorizontal appended: the parts' block offsets.
  L.OffsetSlot = static_cast<unsigned>(L.Slots.size());
  for (size_t I = L.OffsetSlot; I < E.Params.size(); ++I) {
    JITFUSE_CHECK(E.Params[I].K == codegen::KernelParam::BlockOffset,
                  "a horizontal launch's own parameters follow its parts'");
    ArgSlot S;
    S.K = codegen::KernelParam::BlockOffset;
    S.Type = DType::I32;
    S.ElemBytes = 4;
    S.Index = E.Params[I].Index;
    L.Slots.push_back(S);
  }
  JITFUSE_CHECK(L.Slots.size() == E.Params.size() && L.Slots.size() - L.OffsetSlot + 1 ==
                                                         Group.size(),
                "one slot per parameter of a horizontal launch");
  finishSlots(L);
  return L;
}

} // namespace

void ExecutableImpl::buildLaunches(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                                   llvm::ArrayRef<std::vector<unsigned>> Groups,
                                   llvm::ArrayRef<codegen::EmittedKernel> PartEmitted,
                                   llvm::ArrayRef<codegen::EmittedKernel> Emitted,
                                   llvm::ArrayRef<SizeSum> LaunchBytes,
                                   const std::vector<bool> &Splits, int64_t MaxBytes) {
  auto Names = [](LaunchPlan &L, const codegen::EmittedKernel &E) {
    for (const codegen::EmittedKernel::Variant &V : E.Variants)
      L.FnNames.push_back(V.Name);
  };
  std::map<NodeId, unsigned> Inter;
  for (size_t I = 0; I < Groups.size(); ++I) {
    if (Groups[I].size() == 1)
      Launches.push_back(makeLaunch(G, Plans[Groups[I].front()], Emitted[I], Inter, *this));
    else
      Launches.push_back(
          makeHorizontalLaunch(G, Plans, Groups[I], PartEmitted, Emitted[I], Inter, *this));
    LaunchPlan &L = Launches.back();
    Names(L, Emitted[I]);
    if (!Splits[I])
      continue;
    L.MaxCombinedBytes = MaxBytes;
    L.Bytes = LaunchBytes[I];
    for (unsigned K : Groups[I]) {
      L.Alone.push_back(makeLaunch(G, Plans[K], PartEmitted[K], Inter, *this));
      Names(L.Alone.back(), PartEmitted[K]);
    }
  }
  InterBuffers.resize(InterNumel.size());
}

/// A row kept in shared memory or an occupancy pad: variant V's kernel opts
/// in to its bytes.
static void allowShared(const LaunchPlan &L, size_t V) {
  const codegen::LaunchRule &R = L.ruleOf(V);
  if (int64_t Bytes = R.dynamicSharedBytes(L.Vecs[V]); Bytes > 0 && L.Fns[V])
    rt::allowDynamicShared(L.Fns[V], static_cast<unsigned>(Bytes), L.FnNames[V]);
}

void ExecutableImpl::bindFunctions() {
  forEachPlan(Launches, [&](LaunchPlan &L) {
    L.Fns.clear();
    // A partial entry's bundle names what it has; the rest load on demand.
    for (const std::string &Name : L.FnNames)
      L.Fns.push_back(Deferred.valid() && !Mod->names(Name) ? nullptr : Mod->function(Name));
    for (size_t V = 0; V < L.Fns.size(); ++V)
      allowShared(L, V);
    L.Resident.assign(L.Fns.size(), 0); // asked at the first launch (prepareLaunch)
    if (size_t Bytes = L.Rule.partialsBytes(SmCount))
      L.Partials = rt::DeviceBuffer(Bytes);
    if (size_t N = L.Rule.counters()) {
      L.Counter = rt::DeviceBuffer(N * sizeof(unsigned));
      rt::memsetD8(L.Counter.ptr(), 0, N * sizeof(unsigned));
    }
  });
}

void ExecutableImpl::loadDeferred() {
  JITFUSE_CHECK(Deferred.valid() && !DeferredMod, "a variant is missing from a complete entry");
  std::shared_ptr<const rt::CacheEntry> Rest = Deferred.get(); // rethrows NVRTC's error
  Log = Rest->Log; // the first variants' log and the deferred ones
  std::vector<std::string> Names;
  forEachPlan(Launches, [&](LaunchPlan &L) {
    for (size_t V = 0; V < L.Fns.size(); ++V)
      if (!L.Fns[V])
        Names.push_back(L.FnNames[V]);
  });
  DeferredMod = std::make_unique<rt::ModuleSet>(Rest->Image, Names);
  forEachPlan(Launches, [&](LaunchPlan &L) {
    for (size_t V = 0; V < L.Fns.size(); ++V)
      if (!L.Fns[V]) {
        L.Fns[V] = DeferredMod->function(L.FnNames[V]);
        allowShared(L, V);
      }
  });
}

ExecutableImpl::~ExecutableImpl() {
  if (Deferred.valid())
    Deferred.wait();
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
  forEachPlan(Launches, [&](LaunchPlan &L) {
    JITFUSE_CHECK(L.NumPlain > 0 && L.NumPlain <= L.Vecs.size() &&
                      L.Vecs.size() == L.NumPlain * (1 + size_t(L.FewRule.has_value()) +
                                                     size_t(L.WideRule.has_value())) +
                                           L.NumSplit &&
                      (L.NumSplit == 0 || (L.AlignedRule && (L.NumSplit == 1 ||
                                                             L.NumSplit == L.NumPlain))),
                  "every launch has a plain variant, each other form as many, and a "
                  "cluster split one (its aligned) or as many");
    // Pointers pick among the plain variants (Lead then between the peeled
    // ones); the few-rows form mirrors them.
    for (size_t I = 0; I < L.NumPlain - size_t(L.Lead.has_value()); ++I) {
      int V = L.Vecs[I];
      JITFUSE_CHECK(V > 0 && llvm::isPowerOf2_32(unsigned(V)), "vector widths are powers of two");
      L.VecShift.push_back(static_cast<int>(llvm::Log2_32(unsigned(V))));
    }
    L.Shapes.assign(L.Vecs.size(), std::nullopt);
    L.PartOffsets.assign(L.Vecs.size(), std::vector<uint32_t>(L.Parts.size() ? L.Parts.size() - 1 : 0));
    for (LaunchPart &P : L.Parts) {
      for (int V : P.Vecs) {
        JITFUSE_CHECK(V > 0 && llvm::isPowerOf2_32(unsigned(V)),
                      "vector widths are powers of two");
        P.VecShift.push_back(static_cast<int>(llvm::Log2_32(unsigned(V))));
      }
      P.Shapes.assign(P.Vecs.size(), std::nullopt);
    }
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
          AlignCheck C{IsOut, A.Src.Index, static_cast<int>(llvm::Log2_32(A.ElemBytes))};
          L.Align.push_back(C);
          // A horizontal launch picks each part's variant by its own pointers.
          for (LaunchPart &P : L.Parts)
            if (Slot >= P.SlotBegin && Slot < P.SlotEnd)
              P.Align.push_back(C);
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
      case codegen::KernelParam::BlockOffset:
        break; // written per call, with the variant (prepareLaunch)
      }
    }
  });
}

} // namespace jitfuse
