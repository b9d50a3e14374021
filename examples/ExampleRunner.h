//===- examples/ExampleRunner.h - compile, run and check an example -*- C++ -*-===//
//
// What every example program and `jitfuse run` do: print the graph and the
// fused plan, compile fused and unfused, and where a GPU exists run both on
// random inputs and check each output against the fp64 reference
// interpreter with the tolerance rule of docs/NUMERICS.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "examples/ExampleGraphs.h"

#include <cstdint>
#include <optional>

namespace jitfuse::examples {

struct RunOptions {
  /// Seed of the random inputs; unset: JITFUSE_EXAMPLE_SEED, else 1, so a
  /// failure reproduces by rerunning.
  std::optional<uint64_t> Seed;
  bool PrintGraph = true;
  bool PrintPlan = true;
  /// After the check, time every kernel (fused and unfused) and print the
  /// roofline: predicted bytes, median us and GB/s per kernel.
  bool Profile = false;
  /// CompileOptions::MixOrderColumns for the fused compile (its default).
  bool MixOrderColumns = true;
};

/// Runs \p E as described above. Returns the process exit code: 0 when every
/// output matched (or there is no GPU to run on), 1 on a mismatch. Throws
/// jitfuse::Error when compiling or running fails.
int runExample(const ExampleGraph &E, const RunOptions &Opts = {});

/// The whole main() of an example program: builds \p Name, runs it, and
/// turns a jitfuse::Error into a one-line message and exit code 1.
int exampleMain(llvm::StringRef Name, const RunOptions &Opts = {});

} // namespace jitfuse::examples
