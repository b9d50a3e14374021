//===- examples/llama_block.cpp - the element-wise work of a LLaMA layer --===//
//
// The README demo: prints the graph and the fused plan, compiles fused and
// unfused (cache dir, kernel counts, compile times), runs and checks both on
// a GPU, then compiles once more through a fresh Compiler to show that the
// second compile is a disk-cache hit (as is every later run of this program).
//
//===----------------------------------------------------------------------===//
#include "driver/Compiler.h"
#include "examples/ExampleRunner.h"
#include "support/Error.h"

#include <fmt/format.h>

int main() {
  using namespace jitfuse;
  int Rc = examples::exampleMain("llama_block");
  if (Rc != 0)
    return Rc;
  try {
    examples::ExampleGraph E = examples::buildExample("llama_block");
    Compiler Fresh; // empty memory cache: only the disk can make this a hit
    Executable X = Fresh.compile(*E.G);
    fmt::print("recompiled in a fresh Compiler: {} kernels in {:.1f} ms ({}) from {}\n",
               X.numKernels(), X.stats().CompileMs,
               X.stats().CacheHit ? "cache hit" : "cache miss", Fresh.cache().dir());
  } catch (const Error &Err) {
    fmt::print(stderr, "llama_block: error: {}\n", Err.what());
    return 1;
  }
  return 0;
}
