//===- compiler/Dump.h - JITFUSE_DUMP=graph,plan,cuda,ptx --------*- C++ -*-===//
#pragma once

namespace jitfuse {

class ExecutableImpl;
struct CompileOptions;

/// Writes what JITFUSE_DUMP asks for (graph, plan, cuda) to JITFUSE_DUMP_DIR,
/// or to stderr when no directory is set.
void dumpCompile(const ExecutableImpl &X, const CompileOptions &Opts);
/// Writes the PTX when JITFUSE_DUMP has "ptx".
void dumpPtx(ExecutableImpl &X, const CompileOptions &Opts);

} // namespace jitfuse
