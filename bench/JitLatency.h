//===- bench/JitLatency.h - C1/C2: compile latency of the JIT ---*- C++ -*-===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <nlohmann/json.hpp>

#include <string>

namespace jitfuse::bench {

/// Driver/context start-up, then C1 (cold compile of the add+RMSNorm graph
/// with an empty cache: first NVRTC use in the process, and again for a
/// second variant once NVRTC is warm), in-process cache hits (memory, and
/// disk through a fresh Compiler), and C2 (disk hit in a new process: this
/// binary re-executed with --compile-only). Must run before anything else in
/// the process compiles, or "first in process" is not. Prints a table.
nlohmann::ordered_json measureJitLatency(llvm::StringRef SelfExe);

/// The child side of C2: compiles the add+RMSNorm graph with the cache in
/// CacheDir and prints one line starting with "JITFUSE_BENCH_COMPILE_ONLY".
int runCompileOnlyChild(const std::string &CacheDir);

} // namespace jitfuse::bench
