//===- tests/test_max_nan.cpp - NaN-propagating max/min in one instruction -===//
//
// jf_max/jf_min (codegen/device/jitfuse_device.cuh) are PTX max.NaN /
// min.NaN for f32 on sm_80+ (one FMNMX.NAN where the compare-select was
// three instructions); f64 has no such instruction and keeps the
// compare-select. NaN propagation itself is checked on the GPU by the
// [gpu] tier ("every binary op with broadcasting", the reductions with
// NaN/Inf, the random graphs).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("max and min of f32 are max.NaN / min.NaN on sm_90, f64 compare-selects",
          "[codegen][maxnan]") {
  for (DType T : {DType::F32, DType::BF16, DType::F64}) {
    INFO("dtype " << dtypeName(T).str());
    Graph G;
    Value X = G.input("x", T, {"B", 1000});
    Value Y = G.input("y", T, {"B", 1000});
    G.output("m", max(X, Y));
    G.output("n", min(X, Y));
    G.output("r", reduceMax(X));
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    bool F32 = T != DType::F64;
    CHECK((E.ptx().find("max.NaN.f32") != std::string::npos) == F32);
    CHECK((E.ptx().find("min.NaN.f32") != std::string::npos) == F32);
    CHECK(E.ptx().find("max.NaN.f64") == std::string::npos);
  }
}
