//===- codegen/Horizontal.cpp - independent kernels as one launch ---------===//
//
// Horizontal fusion (compiler/Horizontal.h decides which kernels share a
// launch). The parts keep their own schedules: each part variant's text is
// reused verbatim as a __device__ function whose parameters blockIdx,
// gridDim and threadIdx shadow the built-ins, so the skeletons in
// Codegen.cpp need not know they run inside a larger grid. Two properties
// of the skeletons make this sound:
//
//   - no part reads blockDim, and the block reduction helper's own
//     threadIdx.x (jf_block_reduce, used only by one-row blocks) equals the
//     flat thread index the dispatcher hands the part;
//   - a part's block is whole warps (compiler horizontalCandidate), so the
//     threads beyond it return as whole warps before the part runs: every
//     __syncthreads and full-mask shuffle of the part sees exactly its own
//     threads, as in a launch of its own.
//
// The grid offsets are kernel parameters rather than recomputed on the
// device: the host already evaluates each part's LaunchRule (which depends
// on the SM count and the chosen variant), so the device cannot disagree
// with the grid that was launched.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"

#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace jitfuse::codegen {

namespace {

std::string paramName(const KernelParam &K) {
  switch (K.K) {
  case KernelParam::Input: return fmt::format("in_{}", K.Index);
  case KernelParam::Output: return fmt::format("out_{}", K.Index);
  case KernelParam::Scalar: return fmt::format("s_{}", K.Index);
  case KernelParam::DynDim: return fmt::format("d_{}", K.Index);
  case KernelParam::Partials: return "jf_partials";
  case KernelParam::Counter: return "jf_counter";
  case KernelParam::BlockOffset: return fmt::format("jf_b{}", K.Index);
  }
  JITFUSE_UNREACHABLE("unknown parameter kind");
}

/// The declaration of parameter \p K as the part's own signature spells it
/// (Codegen.cpp KernelWriter::signature), named \p Name.
std::string paramDecl(const KernelParam &K, const std::string &Name) {
  switch (K.K) {
  case KernelParam::Input:
    return fmt::format("const {}* __restrict__ {}", storageType(K.Type), Name);
  case KernelParam::Output:
    return fmt::format("{}* __restrict__ {}", storageType(K.Type), Name);
  case KernelParam::Scalar: return fmt::format("{} {}", computeType(K.Type), Name);
  case KernelParam::DynDim: return "long long " + Name;
  case KernelParam::Partials:
  case KernelParam::Counter:
  case KernelParam::BlockOffset: break;
  }
  JITFUSE_INTERNAL("parameter kind {} cannot be part of a horizontal launch", int(K.K));
}

std::string deviceName(const std::string &VariantName) { return VariantName + "_d"; }

/// Part variant \p V (a __global__ definition) as a __device__ function.
std::string asDeviceFunction(const KernelPlan &P, const EmittedKernel::Variant &V) {
  std::string Prefix = kernelOpening(P, V.Name, V.Peeled);
  JITFUSE_CHECK(llvm::StringRef(V.Text).startswith(Prefix),
                "a kernel variant starts with the signature horizontal fusion rewrites");
  // unused: a program part of a split compile (codegen::splitProgram) holds
  // every part variant but calls only those of its own launch variants.
  return fmt::format("static __device__ __forceinline__ __attribute__((unused)) void {}(\n"
                     "    const uint3 blockIdx, const uint3 gridDim, const uint3 threadIdx,",
                     deviceName(V.Name)) +
         V.Text.substr(Prefix.size());
}

} // namespace

EmittedKernel emitHorizontal(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                             llvm::ArrayRef<EmittedKernel> PartKernels,
                             llvm::ArrayRef<unsigned> Parts, const std::string &Name) {
  (void)G;
  JITFUSE_CHECK(Parts.size() >= 2, "a horizontal launch has at least two parts");
  int MaxThreads = 0;
  size_t NumVariants = 0;
  std::string Header = fmt::format("// launch {} (horizontal): {} kernels, one block range each\n",
                                   Name, Parts.size());
  for (size_t Pos = 0; Pos < Parts.size(); ++Pos) {
    unsigned I = Parts[Pos];
    const KernelPlan &P = Plans[I];
    JITFUSE_CHECK(P.Kind != KernelKind::FullReduce && (P.ThreadsX * P.RowsPerBlock) % 32 == 0,
                  "horizontal parts are element-wise or row kernels of whole warps");
    MaxThreads = std::max(MaxThreads, P.ThreadsX * P.RowsPerBlock);
    NumVariants = std::max(NumVariants, PartKernels[I].sharedVariants());
    Header += fmt::format("//   part {} <- kernel {}\n", Pos, P.Name);
  }
  for (unsigned I : Parts) {
    Header += "\n" + PartKernels[I].Header;
    // A part's few-rows form is not used in a shared launch.
    for (size_t V = 0; V < PartKernels[I].sharedVariants(); ++V)
      Header += asDeviceFunction(Plans[I], PartKernels[I].Variants[V]);
  }

  EmittedKernel Out{Header, {}, {}, PartKernels[Parts.front()].Launch, std::nullopt,
                    std::nullopt, std::nullopt};
  std::vector<std::string> Decls;
  std::vector<std::vector<std::string>> Args(Parts.size());
  for (size_t J = 0; J < Parts.size(); ++J)
    for (const KernelParam &K : PartKernels[Parts[J]].Params) {
      std::string Arg = fmt::format("p{}_{}", J, paramName(K));
      Decls.push_back(paramDecl(K, Arg));
      Args[J].push_back(Arg);
      Out.Params.push_back(K);
    }
  for (unsigned J = 1; J < Parts.size(); ++J) {
    Decls.push_back(fmt::format("unsigned jf_b{}", J));
    Out.Params.push_back({KernelParam::BlockOffset, J, DType::I32});
  }

  for (size_t K = 0; K < NumVariants; ++K) {
    std::string VName = fmt::format("{}_x{}", Name, K);
    std::string T = fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(",
                                MaxThreads, VName);
    for (size_t D = 0; D < Decls.size(); ++D)
      T += (D ? ",\n    " : "\n    ") + Decls[D];
    T += ") {\n  const unsigned jf_b = blockIdx.x, jf_t = threadIdx.x;\n";
    int Vec = 1;
    for (size_t J = 0; J < Parts.size(); ++J) {
      const KernelPlan &P = Plans[Parts[J]];
      const EmittedKernel &E = PartKernels[Parts[J]];
      const EmittedKernel::Variant &V = E.Variants[std::min(K, E.sharedVariants() - 1)];
      Vec = std::max(Vec, V.Vec);
      bool Last = J + 1 == Parts.size();
      std::string Lo = J ? fmt::format("jf_b{}", J) : "0u";
      std::string Hi = Last ? "gridDim.x" : fmt::format("jf_b{}", J + 1);
      std::string Ind = Last ? "  " : "    ";
      if (!Last)
        T += fmt::format("  if (jf_b < {}) {{\n", Hi);
      int Threads = P.ThreadsX * P.RowsPerBlock;
      if (Threads < MaxThreads)
        T += fmt::format("{}if (jf_t >= {}u) return; // whole warps, before any barrier\n", Ind,
                         Threads);
      T += fmt::format("{}{}(make_uint3(jf_b - {}, 0u, 0u), make_uint3({} - {}, 1u, 1u),\n", Ind,
                       deviceName(V.Name), Lo, Hi, Lo);
      T += fmt::format("{}    make_uint3(jf_t % {}u, jf_t / {}u, 0u)", Ind, P.ThreadsX,
                       P.ThreadsX);
      for (const std::string &A : Args[J])
        T += ", " + A;
      T += ");\n";
      if (!Last)
        T += "    return;\n  }\n";
    }
    T += "}\n";
    Out.Variants.push_back({Vec, VName, std::move(T), EmittedKernel::Variant::Plain});
  }
  return Out;
}

} // namespace jitfuse::codegen
