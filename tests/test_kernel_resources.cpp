//===- tests/test_kernel_resources.cpp - registers, spills, stack ---------===//
//
// ptxas's report of every generated kernel variant (Executable::
// kernelResources, from NVRTC's log). A spill or a stack frame in a
// memory-bound kernel is a performance cliff that no CPU test of values
// would notice; here the patterns of the shape sweep, over short to
// vocabulary-sized rows and each float type, with each row schedule, must
// compile to kernels that keep everything in registers (the one measured
// exception: a PeeledRowOccupancy variant's few bytes), and without an
// NVRTC warning in the log users read.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "SweepPatterns.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("generated kernels keep everything in registers and compile without warnings",
          "[codegen][resources]") {
  // The most a PeeledRowOccupancy variant may spill (56 B measured for add +
  // RMSNorm bf16 x 14336, 1.29x faster than unbounded at 73 registers).
  const int BoundedSpillBytes = 64;
  const char *Patterns[] = {"add_rmsnorm", "layernorm", "softmax", "sum_abs_amax", "bias_gelu",
                            "silu_mul"};
  int Variants = 0, MaxRegisters = 0;
  for (const char *Name : Patterns)
    for (DType T : {DType::F32, DType::BF16})
      for (int64_t H : {int64_t(1021), int64_t(4096), int64_t(14336), int64_t(50257),
                        int64_t(128256)})
        for (int Option = 0; Option < 7; ++Option) {
          CompileOptions Opts;
          Opts.Arch = "sm_90";
          Opts.DeferVariants = false;
          Opts.RowSharedMemory = Option == 1;
          Opts.RowClusters = Option == 2;
          Opts.AlignedRowCopy = Option == 3;
          Opts.JointReduce = Option != 4; // the default is on
          Opts.RowWideRows = Option != 5; // the default is on
          Opts.RowCacheWideThreads = Option != 6; // the default is on
          // RowSharedMemory, RowClusters, RowWideRows and RowCacheWideThreads
          // change only long row kernels' schedules; AlignedRowCopy and
          // JointReduce any row kernel's.
          bool RowPattern = std::string(Name) != "bias_gelu" && std::string(Name) != "silu_mul";
          bool LongOnly = Option < 3 || Option >= 5;
          if (Option > 0 && (!RowPattern || (LongOnly && H < 14336)))
            continue;
          Executable E = testCompiler().compile(sweepPattern(Name, T, H), Opts);
          std::vector<rt::KernelResources> R = E.kernelResources();
          INFO(Name << " " << dtypeName(T).str() << " x " << H << " option " << Option << "\n"
                    << E.plan());
          // Each kernel's variants all compiled and reported.
          size_t Expected = 0;
          for (const KernelInfo &K : E.kernels())
            Expected += K.Vecs.size() + K.FewRowsVariants + K.WideRowsVariants +
                        K.AlignedClusterVariants;
          CHECK(R.size() == Expected);
          // No NVRTC warning (an unused variable or helper) in the log.
          CHECK(E.compileLog().find("warning") == std::string::npos);
          // PeeledRowOccupancy's peeled variants may spill a little to stay
          // at two blocks an SM (measured faster than one block unspilled).
          // Those are the plain form's peeled variants (`<kernel>_p<vec>`,
          // and `<kernel>_o<vec>` led by the output: up to 60 B).
          // So may the output-led copy of a row kept at 1024 threads (64
          // registers a thread): LayerNorm 16-bit x 50257's, 4 B stored and
          // 16 B loaded, run only on x alone off its outputs' phase.
          bool Bounded = E.plan().find("PeeledRowOccupancy") != std::string::npos;
          auto MaySpill = [&](llvm::StringRef Name) {
            return llvm::any_of(E.kernels(), [&](const KernelInfo &KI) {
              bool Peeled = Name.startswith(KI.Name + "_p") || Name.startswith(KI.Name + "_o");
              bool WideLed = KI.ThreadsX * KI.RowsPerBlock == 1024 &&
                             Name.startswith(KI.Name + "_o");
              return (Bounded && Peeled) || WideLed;
            });
          };
          for (const rt::KernelResources &K : R) {
            INFO("kernel " << K.Name << ": " << K.Registers << " registers, "
                           << K.SpillStoreBytes << " B spilled");
            int SpillLimit = MaySpill(K.Name)                   ? BoundedSpillBytes
                             : boundedSplitVariant(E, K.Name) ? BoundedSplitSpillBytes
                                                             : 0;
            CHECK(K.SpillStoreBytes <= SpillLimit);
            CHECK(K.SpillLoadBytes <= SpillLimit);
            CHECK(K.StackBytes <= SpillLimit);
            CHECK(K.Registers > 0);
            MaxRegisters = std::max(MaxRegisters, K.Registers);
            ++Variants;
          }
        }
  std::printf("kernel resources: %d variants, at most %d registers a thread\n", Variants,
              MaxRegisters);
}

namespace {
/// The PTX of entry \p Name: from its `.entry` to the next one.
std::string entryPtx(const std::string &Ptx, const std::string &Name) {
  size_t At = Ptx.find(".entry " + Name + "(");
  if (At == std::string::npos)
    return "";
  size_t End = Ptx.find(".entry ", At + 1);
  return Ptx.substr(At, End == std::string::npos ? std::string::npos : End - At);
}
} // namespace

TEST_CASE("RoPE keeps 16-byte accesses in both variants", "[codegen][alignment]") {
  // Aligned: the halves go piece by piece over groups of heads, and each
  // branch stores its chunk in PTX (NVVM merged the two branches' struct
  // stores into 2-byte ones: 3x slower on the H200). Peeled (any offset):
  // a whole chunk off its boundary loads the two aligned blocks that hold
  // it (the second predicated off at offset 0) and stores in 2 + 3 x 4 + 2
  // bytes, instead of one access per lane.
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.DeferVariants = false;
  Graph G;
  Value Q = G.input("q", DType::BF16, {"T", 32, 128});
  Value Cos = G.input("cos", DType::BF16, {"T", 64});
  Value Sin = G.input("sin", DType::BF16, {"T", 64});
  G.output("q_rot", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
  Executable E = testCompiler().compile(G, Opts);
  REQUIRE(E.numKernels() == 1);
  INFO(E.plan());
  CHECK(E.plan().find("a warp takes one piece of 4 rows") != std::string::npos);
  const std::string &Ptx = E.ptx();
  std::string Aligned = entryPtx(Ptx, "jf_k0_cast_v8");
  REQUIRE(!Aligned.empty());
  CHECK(Aligned.find("st.global.v4") != std::string::npos);
  CHECK(Aligned.find("st.global.u16") == std::string::npos);
  std::string Peeled = entryPtx(Ptx, "jf_k0_cast_p8");
  REQUIRE(!Peeled.empty());
  CHECK(Peeled.find("@p ld.global.v4.b32") != std::string::npos);
  CHECK(Peeled.find("st.global.b16") != std::string::npos);
}
