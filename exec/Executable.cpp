//===- exec/Executable.cpp - argument checks and the launch loop ----------===//
#include "exec/ExecutableImpl.h"

#include "ir/Printer.h"
#include "runtime/Driver.h"
#include "runtime/Nvrtc.h"
#include "support/Error.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>

namespace jitfuse {

Executable::Executable(std::unique_ptr<ExecutableImpl> I) : Impl(std::move(I)) {
  // Element counts as polynomials in the dynamic dims, so checkArgs does no
  // name lookups or allocation per run.
  for (const TensorDesc &T : Impl->Inputs)
    Impl->InNumel.push_back(SizeExpr::of(T.Dims, Impl->DynDims));
  for (const TensorDesc &T : Impl->Outputs)
    Impl->OutNumel.push_back(SizeExpr::of(T.Dims, Impl->DynDims));
  for (bool IsOut : {false, true}) {
    llvm::ArrayRef<TensorDesc> Ts = IsOut ? Impl->Outputs : Impl->Inputs;
    for (size_t I = 0; I < Ts.size(); ++I) {
      if (Ts[I].Strides.empty())
        continue;
      ExecutableImpl::StridedDesc D{IsOut, static_cast<unsigned>(I), {}, {}};
      for (size_t K = 0; K < Ts[I].Dims.size(); ++K) {
        D.Sizes.push_back(SizeExpr::of(llvm::ArrayRef<Dim>(Ts[I].Dims[K]), Impl->DynDims));
        D.Strides.push_back(SizeExpr::of(llvm::ArrayRef<Dim>(Ts[I].Strides[K]), Impl->DynDims));
      }
      Impl->Strided.push_back(std::move(D));
    }
  }
  Impl->prepareHotPath();
}
Executable::Executable(Executable &&) noexcept = default;
Executable &Executable::operator=(Executable &&) noexcept = default;
Executable::~Executable() = default;

unsigned Executable::numKernels() const { return Impl->Kernels.size(); }
unsigned Executable::numLaunches() const { return Impl->Launches.size(); }
bool Executable::launchSplitAt(unsigned Launch, llvm::ArrayRef<int64_t> Dims) const {
  if (Launch >= Impl->Launches.size())
    fail("launchSplitAt: launch {} does not exist; the executable has {}", Launch,
         Impl->Launches.size());
  if (Dims.size() != Impl->DynDims.size())
    fail("launchSplitAt: got {} dynamic dim values, the graph has {}", Dims.size(),
         Impl->DynDims.size());
  return !Impl->Launches[Launch].combinedAt(Dims);
}
unsigned Executable::numLaunchesAt(llvm::ArrayRef<int64_t> Dims) const {
  unsigned N = 0;
  for (unsigned L = 0; L < Impl->Launches.size(); ++L)
    N += launchSplitAt(L, Dims) ? Impl->Launches[L].Alone.size() : 1;
  return N;
}
llvm::ArrayRef<KernelInfo> Executable::kernels() const { return Impl->Kernels; }
llvm::ArrayRef<TensorDesc> Executable::inputs() const { return Impl->Inputs; }
llvm::ArrayRef<TensorDesc> Executable::outputs() const { return Impl->Outputs; }
llvm::ArrayRef<TensorDesc> Executable::scalars() const { return Impl->Scalars; }
llvm::ArrayRef<std::string> Executable::dynamicDims() const { return Impl->DynDims; }
const Partition &Executable::partition() const { return Impl->Part; }
const std::string &Executable::plan() const { return Impl->PlanText; }
const std::string &Executable::planDot() const { return Impl->PlanDot; }
const std::string &Executable::graphText() const { return Impl->GraphText; }
const std::string &Executable::source() const { return Impl->Source; }
const std::string &Executable::compileLog() const { return Impl->Log; }
std::vector<rt::KernelResources> Executable::kernelResources() const {
  return rt::parsePtxasReport(Impl->Log);
}
const std::string &Executable::cacheKey() const { return Impl->Key; }
const CompileStats &Executable::stats() const { return Impl->Stats; }
bool Executable::canRun() const { return Impl->HaveDevice; }

const std::string &Executable::ptx() {
  if (Impl->Ptx.empty())
    Impl->Ptx = rt::compileCuda(Impl->Source, "jitfuse", Impl->NvrtcOptions, true).Ptx;
  return Impl->Ptx;
}

std::vector<int64_t> Executable::kernelBytes(llvm::ArrayRef<int64_t> Dims) const {
  if (Dims.size() != Impl->DynDims.size())
    fail("kernelBytes: got {} dynamic dim values, the graph has {} ({})",
         Dims.size(), Impl->DynDims.size(),
         Impl->DynDims.empty() ? std::string("none")
                               : fmt::format("{}", fmt::join(Impl->DynDims, ", ")));
  for (size_t I = 0; I < Dims.size(); ++I)
    if (Dims[I] < 0)
      fail("kernelBytes: dynamic dim '{}' = {} is negative; expected >= 0",
           Impl->DynDims[I], Dims[I]);
  std::vector<int64_t> Out;
  for (const SizeSum &S : Impl->KernelBytes)
    Out.push_back(S.eval(Dims));
  return Out;
}

void Executable::run(llvm::ArrayRef<CUdeviceptr> Inputs,
                     llvm::ArrayRef<CUdeviceptr> Outputs,
                     llvm::ArrayRef<double> Scalars, llvm::ArrayRef<int64_t> Dims,
                     CUstream Stream) {
  if (Impl->Unmixed && Impl->unmixedAt(Dims))
    return Impl->Unmixed->run(Inputs, Outputs, Scalars, Dims, Stream);
  Impl->run(Inputs, Outputs, Scalars, Dims, Stream);
}

bool ExecutableImpl::unmixedAt(llvm::ArrayRef<int64_t> Dims) const {
  if (!Unmixed || Dims.size() != DynDims.size() ||
      llvm::any_of(Dims, [](int64_t D) { return D < 0; }))
    return false;
  return llvm::any_of(MixedRows, [&](const SizeExpr &R) { return R.eval(Dims) < UnmixedBelow; });
}

const Executable &Executable::planAt(llvm::ArrayRef<int64_t> Dims) const {
  return Impl->unmixedAt(Dims) ? *Impl->Unmixed : *this;
}

const Executable *Executable::unmixed() const { return Impl->Unmixed.get(); }

void ExecutableImpl::checkArgs(llvm::ArrayRef<CUdeviceptr> In,
                               llvm::ArrayRef<CUdeviceptr> Out,
                               llvm::ArrayRef<double> Sc,
                               llvm::ArrayRef<int64_t> Dims) {
  if (!HaveDevice)
    fail("run: no CUDA device to run on ({})",
         rt::Driver::get().available() ? "device " + std::to_string(Device) + " does not exist"
                                       : rt::Driver::get().unavailableReason());
  if (In.size() != Inputs.size())
    fail("run: got {} input pointers, the graph has {} inputs", In.size(), Inputs.size());
  if (Out.size() != Outputs.size())
    fail("run: got {} output pointers, the graph has {} outputs", Out.size(),
         Outputs.size());
  if (Sc.size() != Scalars.size())
    fail("run: got {} scalar values, the graph has {} scalars", Sc.size(), Scalars.size());
  if (Dims.size() != DynDims.size())
    fail("run: got {} dynamic dim values, the graph has {} ({})", Dims.size(),
         DynDims.size(), fmt::format("{}", fmt::join(DynDims, ", ")));
  // Decode loops call with the same dims every time: everything that
  // depends only on them is kept from the previous run.
  if (!DimsValid || !std::equal(Dims.begin(), Dims.end(), ValidDims.begin()))
    prepareDims(Dims);
  // A tensor with elements needs a non-null pointer aligned to its element
  // size (a power of two, so one mask); one branch per tensor when all is
  // well.
  for (size_t I = 0; I < In.size(); ++I)
    if (InNonEmpty[I] && (In[I] == 0 || (In[I] & InAlignMask[I]) != 0))
      badPointer(Inputs[I], InNumel[I], In[I], "input", Dims);
  for (size_t I = 0; I < Out.size(); ++I)
    if (OutNonEmpty[I] && (Out[I] == 0 || (Out[I] & OutAlignMask[I]) != 0))
      badPointer(Outputs[I], OutNumel[I], Out[I], "output", Dims);
}

void ExecutableImpl::checkStrides(const StridedDesc &D, llvm::ArrayRef<int64_t> Dims) const {
  const TensorDesc &T = D.IsOutput ? Outputs[D.Index] : Inputs[D.Index];
  llvm::SmallVector<int64_t, 4> Sizes, Steps;
  for (size_t K = 0; K < D.Sizes.size(); ++K) {
    Sizes.push_back(D.Sizes[K].eval(Dims));
    Steps.push_back(D.Strides[K].eval(Dims));
  }
  auto Show = [&] {
    return fmt::format("{} '{}' of shape {} = [{}] at strides {} = [{}]",
                       D.IsOutput ? "output" : "input", T.Name, shapeStr(T.Dims),
                       fmt::join(Sizes, ", "), shapeStr(T.Strides), fmt::join(Steps, ", "));
  };
  if (!stridedSpan(Sizes, Steps))
    fail("run: {} spans more than 2^48 elements", Show());
  if (!D.IsOutput)
    return;
  if (std::string Why = outputOverlap(Sizes, Steps); !Why.empty())
    fail("run: {} overlaps itself: {}; an output needs each element at its own offset",
         Show(), Why);
}

void ExecutableImpl::badPointer(const TensorDesc &T, const SizeExpr &Numel, CUdeviceptr P,
                                const char *What, llvm::ArrayRef<int64_t> Dims) const {
  int64_t N = Numel.eval(Dims);
  if (P == 0)
    fail("run: {} '{}' is a null pointer but holds {} elements", What, T.Name, N);
  fail("run: {} '{}' pointer {:#x} is not aligned to its {}-byte {} elements", What, T.Name,
       P, dtypeBytes(T.Type), dtypeName(T.Type).str());
}

void ExecutableImpl::prepareDims(llvm::ArrayRef<int64_t> Dims) {
  DimsValid = false;
  for (size_t I = 0; I < Dims.size(); ++I)
    if (Dims[I] < 0 || Dims[I] > MaxElements)
      fail("run: dynamic dim '{}' = {} is out of range; expected 0 <= {} <= 2^48",
           DynDims[I], Dims[I], DynDims[I]);
  auto CheckSize = [&](const TensorDesc &T, const SizeExpr &Numel, const char *What) {
    int64_t N = Numel.eval(Dims);
    if (N > MaxElements)
      fail("run: {} '{}' {} would hold {} elements; expected at most 2^48", What,
           T.Name, shapeStr(T.Dims), N);
    return static_cast<uint8_t>(N != 0);
  };
  for (size_t I = 0; I < Inputs.size(); ++I)
    InNonEmpty[I] = CheckSize(Inputs[I], InNumel[I], "input");
  for (size_t I = 0; I < Outputs.size(); ++I)
    OutNonEmpty[I] = CheckSize(Outputs[I], OutNumel[I], "output");
  for (const StridedDesc &D : Strided)
    checkStrides(D, Dims);
  growIntermediates(Dims);
  for (LaunchPlan &L : Launches) {
    // compiler/Horizontal.h: the parts run one by one above the bytes.
    L.Active = L.combinedAt(Dims);
    prepareLaunchDims(L, Dims);
    for (LaunchPlan &A : L.Alone) {
      A.Active = !L.Active;
      prepareLaunchDims(A, Dims);
    }
  }
  // Graph mode keeps a graph per form, so dims crossing a split and back
  // do not rebuild one.
  std::vector<bool> Form;
  for (const LaunchPlan &L : Launches)
    if (!L.Alone.empty())
      Form.push_back(L.Active);
  auto It = std::find(GraphForms.begin(), GraphForms.end(), Form);
  if (It == GraphForms.end()) {
    if (GraphForms.size() == MaxGraphForms) {
      GraphForms.clear();
      CudaGraphs.clear();
    }
    GraphForms.push_back(std::move(Form));
    It = GraphForms.end() - 1;
  }
  GraphForm = static_cast<size_t>(It - GraphForms.begin());
  ValidDims.assign(Dims.begin(), Dims.end());
  DimsValid = true;
}

void ExecutableImpl::prepareLaunchDims(LaunchPlan &L, llvm::ArrayRef<int64_t> Dims) {
  if (!L.Active)
    return; // prepareLaunch skips it
  if (L.Parts.empty()) {
    codegen::LaunchSizes Sizes{L.Numel.eval(Dims), L.Rows.eval(Dims), L.RowLen.eval(Dims)};
    for (size_t V = 0; V < L.NumPlain; ++V)
      L.Shapes[V] = L.Rule.shape(Sizes, L.Vecs[V], SmCount, L.Rule.peeled(V));
    // The few-rows form (codegen::launch::useFewRows), else the wide
    // one (useWideRows): only the shapes of the form this run launches
    // are computed.
    bool Few = L.FewRule && codegen::launch::useFewRows(Sizes.Rows, L.FewRule->clusterX(),
                                                        SmCount);
    bool Wide = !Few && L.WideRule && codegen::launch::useWideRows(Sizes.Rows, SmCount);
    L.FormBase = Few ? L.NumPlain : Wide ? L.NumPlain * (L.FewRule ? 2 : 1) : 0;
    size_t Forms = L.Vecs.size() - L.NumSplit;
    // The cluster split's variants stand in for the plain form's of the
    // same index (prepareLaunch).
    for (size_t S = 0; S < L.NumSplit; ++S)
      L.Shapes[Forms + S] =
          L.FormBase == 0 || (Wide && L.AlignedOverWide)
              ? L.AlignedRule->shape(Sizes, L.Vecs[Forms + S], SmCount, L.AlignedRule->peeled(S))
              : std::nullopt;
    for (size_t V = L.NumPlain; V < Forms; ++V) {
      const codegen::LaunchRule &R = L.ruleOf(V);
      size_t Base = V - V % L.NumPlain;
      L.Shapes[V] = Base == L.FormBase
                        ? R.shape(Sizes, L.Vecs[V], SmCount, R.peeled(V - Base))
                        : std::nullopt;
    }
  } else {
    prepareHorizontalShapes(L, Dims);
  }
  auto Shift = [&](llvm::ArrayRef<SizeExpr> Strides) {
    int Min = 64;
    for (const SizeExpr &S : Strides)
      Min = std::min(Min, std::countr_zero(static_cast<uint64_t>(S.eval(Dims))));
    return Min;
  };
  L.StrideShift = Shift(L.StrideAlign);
  for (LaunchPart &Part : L.Parts)
    Part.StrideShift = Shift(Part.StrideAlign);
  for (size_t S = 0; S < L.Slots.size(); ++S) {
    const ArgSlot &A = L.Slots[S];
    uint64_t &Slot = L.Storage[S];
    switch (A.K) {
    case codegen::KernelParam::Input:
    case codegen::KernelParam::Output:
      if (A.Src.K == TensorSource::Intermediate)
        Slot = InterBuffers[A.Src.Index].ptr();
      break; // graph pointers: per call (prepareLaunch)
    case codegen::KernelParam::Scalar:
      break; // per call
    case codegen::KernelParam::DynDim:
      Slot = static_cast<uint64_t>(Dims[A.Index]);
      break;
    case codegen::KernelParam::Partials:
      Slot = L.Partials.ptr();
      break;
    case codegen::KernelParam::Counter:
      Slot = L.Counter.ptr();
      break;
    case codegen::KernelParam::BlockOffset:
      break; // per call (prepareLaunch)
    }
  }
}

void ExecutableImpl::prepareHorizontalShapes(LaunchPlan &L, llvm::ArrayRef<int64_t> Dims) {
  for (LaunchPart &P : L.Parts) {
    codegen::LaunchSizes Sizes{P.Numel.eval(Dims), P.Rows.eval(Dims), P.RowLen.eval(Dims)};
    for (size_t V = 0; V < P.Vecs.size(); ++V) {
      P.Shapes[V] = P.Rule.shape(Sizes, P.Vecs[V], SmCount, P.Rule.peeled(V));
      // A part keeps a block a row (its rows then never share a block).
      if (P.Shapes[V])
        P.Shapes[V]->RowLoop = false;
    }
  }
  for (size_t K = 0; K < L.Vecs.size(); ++K) {
    // Part J's blocks follow parts 0..J-1's; a part without elements gets
    // an empty range.
    int64_t Blocks = 0;
    for (size_t J = 0; J < L.Parts.size(); ++J) {
      const LaunchPart &P = L.Parts[J];
      if (J)
        L.PartOffsets[K][J - 1] = static_cast<uint32_t>(Blocks);
      if (const auto &S = P.Shapes[std::min(K, P.Shapes.size() - 1)])
        Blocks += S->GridX;
      if (Blocks > INT32_MAX)
        fail("run: launch '{}' would need {} blocks, over the CUDA grid limit; the tensors "
             "are too large",
             L.Name, Blocks);
    }
    if (Blocks == 0) {
      L.Shapes[K] = std::nullopt;
      continue;
    }
    codegen::LaunchShape S;
    S.GridX = static_cast<unsigned>(Blocks);
    S.BlockX = L.MaxThreads;
    S.BlockY = 1;
    L.Shapes[K] = S;
  }
}

void ExecutableImpl::growIntermediates(llvm::ArrayRef<int64_t> Dims) {
  for (size_t I = 0; I < InterNumel.size(); ++I) {
    // eval saturates; an intermediate larger than any input or output (a
    // broadcast) must not wrap to a small buffer.
    int64_t N = InterNumel[I].eval(Dims);
    if (N > MaxElements)
      fail("run: intermediate {} of kernel plan would hold {} elements with these "
           "dims; expected at most 2^48",
           I, N);
    size_t Bytes = static_cast<size_t>(N) * InterElemBytes[I];
    if (Bytes > InterBuffers[I].size())
      InterBuffers[I] = rt::DeviceBuffer(Bytes);
  }
}

static uint64_t scalarBits(DType T, double V) {
  uint64_t Bits = 0;
  switch (T) {
  case DType::F64:
    std::memcpy(&Bits, &V, sizeof(V));
    break;
  case DType::I64: {
    int64_t I = static_cast<int64_t>(V);
    std::memcpy(&Bits, &I, sizeof(I));
    break;
  }
  case DType::I32: {
    int32_t I = static_cast<int32_t>(V);
    std::memcpy(&Bits, &I, sizeof(I));
    break;
  }
  case DType::Bool:
    Bits = V != 0;
    break;
  default: {
    float F = static_cast<float>(V);
    std::memcpy(&Bits, &F, sizeof(F));
    break;
  }
  }
  return Bits;
}

void ExecutableImpl::makeCurrent() const {
  rt::Driver &D = rt::Driver::get();
  CUcontext Cur = nullptr;
  D.check(D.api().cuCtxGetCurrent(&Cur), "cuCtxGetCurrent");
  if (Cur != Ctx)
    D.check(D.api().cuCtxSetCurrent(Ctx), "cuCtxSetCurrent");
}

void ExecutableImpl::run(llvm::ArrayRef<CUdeviceptr> In,
                         llvm::ArrayRef<CUdeviceptr> Out,
                         llvm::ArrayRef<double> Sc, llvm::ArrayRef<int64_t> Dims,
                         CUstream Stream) {
  checkArgs(In, Out, Sc, Dims);
  makeCurrent();
  if (UseCudaGraph) {
    runGraph(In, Out, Sc, Stream);
    return;
  }
  forEachPlan(Launches, [&](LaunchPlan &L) {
    PreparedLaunch P = prepareLaunch(L, In, Out, Sc);
    if (!P.Skip)
      rt::launchKernel(P.Fn, P.Grid, P.Block, P.SharedBytes, Stream, L.ArgPtrs.data());
  });
}

PreparedLaunch ExecutableImpl::prepareLaunch(LaunchPlan &L, llvm::ArrayRef<CUdeviceptr> In,
                                             llvm::ArrayRef<CUdeviceptr> Out,
                                             llvm::ArrayRef<double> Sc) {
  PreparedLaunch P;
  if (!L.Active) {
    P.Skip = true;
    return P;
  }
  // Widest variant every vectorized pointer allows: Vecs and element sizes
  // are powers of two, so a pointer allows 2^k elements when its address
  // has k + log2(element size) trailing zero bits (all of them for null).
  auto Widest = [&](llvm::ArrayRef<AlignCheck> Align, llvm::ArrayRef<int> VecShift,
                    int StrideShift) {
    int MinShift = StrideShift;
    for (const AlignCheck &A : Align) {
      CUdeviceptr Ptr = A.IsOutput ? Out[A.Index] : In[A.Index];
      MinShift = std::min(MinShift, std::countr_zero(Ptr) - A.ElemShift);
    }
    size_t V = 0;
    while (V + 1 < VecShift.size() && VecShift[V] > MinShift)
      ++V;
    return V;
  };
  size_t V = 0;
  if (L.Parts.empty()) {
    V = Widest(L.Align, L.VecShift, L.StrideShift);
    // The peeled variant led by the output when the input's phase differs
    // (KernelPlan::OutputLedVariant).
    if (L.Lead && V + 1 == L.VecShift.size()) {
      auto Phase = [&](const std::optional<AlignCheck> &A) -> uint64_t {
        if (!A)
          return 0;
        return ((A->IsOutput ? Out[A->Index] : In[A->Index]) >> A->ElemShift) & L.Lead->VecMask;
      };
      const uint64_t In = Phase(L.Lead->In);
      if (In != Phase(L.Lead->Out) ||
          llvm::any_of(L.Lead->Same, [&](const auto &A) { return Phase(A) != In; }))
        ++V;
    }
  } else {
    // Variant V runs each part's variant min(V, last); later variants serve
    // more pointers, so the latest any part needs serves them all.
    for (const LaunchPart &Part : L.Parts)
      V = std::max(V, Widest(Part.Align, Part.VecShift, Part.StrideShift));
    for (size_t J = 0; J < L.PartOffsets[V].size(); ++J)
      L.Storage[L.OffsetSlot + J] = L.PartOffsets[V][J];
  }
  V += L.FormBase;
  // KernelPlan::AlignedCluster: the aligned variant of the plain form (or
  // the wide one's, AlignedClusterOverWide), or with AlignedClusterPeeled
  // any of its variants, runs as the cluster split's of the same index (its
  // shapes are set only when that form runs).
  if (V - L.FormBase < L.NumSplit && L.Shapes[L.Shapes.size() - L.NumSplit])
    V = L.Shapes.size() - L.NumSplit + (V - L.FormBase);
  const std::optional<codegen::LaunchShape> &Shape = L.Shapes[V];
  if (!Shape) {
    P.Skip = true;
    return P;
  }
  for (const CallSlot &C : L.PerCall) {
    uint64_t &Slot = L.Storage[C.Slot];
    switch (C.K) {
    case CallSlot::InPtr: Slot = In[C.Index]; break;
    case CallSlot::OutPtr: Slot = Out[C.Index]; break;
    case CallSlot::ScalarValue: Slot = scalarBits(C.Type, Sc[C.Index]); break;
    }
  }
  if (!L.Fns[V])
    loadDeferred(); // the first run that needs a deferred variant
  P.Fn = L.Fns[V];
  P.Grid.X = Shape->GridX;
  if (Shape->RowLoop) {
    // KernelPlan::RowPhaseLoop: one wave of blocks, each looping over its
    // rows; the kernel's occupancy is known once it is loaded.
    if (L.Resident[V] == 0)
      L.Resident[V] = rt::residentBlocksPerSm(P.Fn, int(Shape->BlockX * Shape->BlockY),
                                              Shape->SharedBytes, L.FnNames[V]);
    P.Grid.X = codegen::launch::rowLoopGrid(Shape->GridX, L.Vecs[V], SmCount, L.Resident[V]);
  }
  P.Block.X = Shape->BlockX;
  P.Block.Y = Shape->BlockY;
  P.SharedBytes = Shape->SharedBytes;
  return P;
}

} // namespace jitfuse
