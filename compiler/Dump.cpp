//===- compiler/Dump.cpp - JITFUSE_DUMP=graph,plan,cuda,ptx ---------------===//
#include "compiler/Dump.h"

#include "compiler/ExecutableImpl.h"
#include "runtime/CacheIO.h"
#include "runtime/Nvrtc.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

namespace jitfuse {

static bool wants(llvm::StringRef What) {
  const char *Env = std::getenv("JITFUSE_DUMP");
  if (!Env)
    return false;
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  llvm::StringRef(Env).split(Parts, ',');
  for (llvm::StringRef P : Parts)
    if (P.trim() == What || P.trim() == "all")
      return true;
  return false;
}

/// One dump: a file named after the cache key (so names never collide and
/// never carry user text), or stderr.
static void emit(const ExecutableImpl &X, llvm::StringRef Ext, const std::string &Text) {
  const char *Dir = std::getenv("JITFUSE_DUMP_DIR");
  if (!Dir || !*Dir) {
    std::fprintf(stderr, "===== jitfuse %s %s =====\n%s", X.Key.substr(0, 12).c_str(),
                 Ext.str().c_str(), Text.c_str());
    return;
  }
  std::error_code EC;
  std::filesystem::create_directories(Dir, EC);
  std::string Path = std::string(Dir) + "/jitfuse_" + X.Key.substr(0, 16) + "." + Ext.str();
  // Temp file + rename: whatever sits at Path (a planted symlink to a
  // victim, a FIFO that would block the open) is replaced, never opened.
  std::string Err = rt::writeFileAtomically(Path, Text);
  if (Err.empty())
    return;
  // One warning per dump directory, not one per compile.
  static std::mutex WarnedLock;
  static std::set<std::string> Warned;
  std::lock_guard<std::mutex> Guard(WarnedLock);
  if (Warned.insert(Dir).second)
    std::fprintf(stderr, "jitfuse: warning: could not write dump file '%s' (%s)\n", Path.c_str(),
                 Err.c_str());
}

void dumpCompile(const ExecutableImpl &X, const CompileOptions &) {
  if (wants("graph"))
    emit(X, "graph.txt", X.GraphText);
  if (wants("plan"))
    emit(X, "plan.txt", X.PlanText);
  if (wants("cuda"))
    emit(X, "cu", X.Source);
}

void dumpPtx(ExecutableImpl &X, const CompileOptions &) {
  if (!wants("ptx"))
    return;
  if (X.Ptx.empty())
    X.Ptx = rt::compileCuda(X.Source, "jitfuse", X.NvrtcOptions, true).Ptx;
  emit(X, "ptx", X.Ptx);
}

} // namespace jitfuse
