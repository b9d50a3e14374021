//===- tests/test_kernel_resources.cpp - registers, spills, stack ---------===//
//
// ptxas's report of every generated kernel variant (Executable::
// kernelResources, from NVRTC's log). A spill or a stack frame in a
// memory-bound kernel is a performance cliff that no CPU test of values
// would notice; here the patterns of the shape sweep, over short to
// vocabulary-sized rows and each float type, with each row schedule, must
// compile to kernels that keep everything in registers, and without an
// NVRTC warning in the log users read.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Graph pattern(const std::string &Name, DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  if (Name == "add_rmsnorm") {
    Value R = X + G.input("residual", T, {"B", H});
    G.output("residual_out", R);
    G.output("y", nn::rmsNorm(R, G.input("w", T, {H}), G.scalar("eps", DType::F32)));
  } else if (Name == "layernorm") {
    G.output("y", nn::layerNorm(X, G.input("w", T, {H}), G.input("b", T, {H}),
                                G.scalar("eps", DType::F32)));
  } else if (Name == "softmax") {
    G.output("p", nn::softmax(X));
  } else if (Name == "sum_abs_amax") {
    G.output("s", sum(abs(X)));
    G.output("m", reduceMax(abs(X)));
  } else if (Name == "bias_gelu") {
    G.output("y", nn::geluBias(X, G.input("bias", T, {H}), true));
  } else {
    G.output("y", nn::siluMul(X, G.input("up", T, {"B", H})));
  }
  return G;
}

} // namespace

TEST_CASE("generated kernels keep everything in registers and compile without warnings",
          "[codegen][resources]") {
  const char *Patterns[] = {"add_rmsnorm", "layernorm", "softmax", "sum_abs_amax", "bias_gelu",
                            "silu_mul"};
  int Variants = 0, MaxRegisters = 0;
  for (const char *Name : Patterns)
    for (DType T : {DType::F32, DType::BF16})
      for (int64_t H : {int64_t(1021), int64_t(4096), int64_t(14336), int64_t(50257),
                        int64_t(128256)})
        for (int Option = 0; Option < 3; ++Option) {
          CompileOptions Opts;
          Opts.Arch = "sm_90";
          Opts.DeferVariants = false;
          Opts.RowSharedMemory = Option == 1;
          Opts.RowClusters = Option == 2;
          // The options change only long row kernels' schedules.
          bool RowPattern = std::string(Name) != "bias_gelu" && std::string(Name) != "silu_mul";
          if (Option > 0 && (!RowPattern || H < 14336))
            continue;
          Executable E = testCompiler().compile(pattern(Name, T, H), Opts);
          std::vector<rt::KernelResources> R = E.kernelResources();
          INFO(Name << " " << dtypeName(T).str() << " x " << H << " option " << Option << "\n"
                    << E.plan());
          // Each kernel's variants all compiled and reported.
          size_t Expected = 0;
          for (const KernelInfo &K : E.kernels())
            Expected += K.Vecs.size() + K.FewRowsVariants;
          CHECK(R.size() == Expected);
          // No NVRTC warning (an unused variable or helper) in the log.
          CHECK(E.compileLog().find("warning") == std::string::npos);
          for (const rt::KernelResources &K : R) {
            INFO("kernel " << K.Name << ": " << K.Registers << " registers");
            CHECK(K.SpillStoreBytes == 0);
            CHECK(K.SpillLoadBytes == 0);
            CHECK(K.StackBytes == 0);
            CHECK(K.Registers > 0);
            MaxRegisters = std::max(MaxRegisters, K.Registers);
            ++Variants;
          }
        }
  std::printf("kernel resources: %d variants, at most %d registers a thread\n", Variants,
              MaxRegisters);
}
