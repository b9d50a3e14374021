//===- driver/Dump.h - JITFUSE_DUMP=graph,plan,cuda,ptx ---------*- C++ -*-===//
#pragma once

#include "support/Settings.h"

#include <llvm/ADT/StringRef.h>

#include <functional>
#include <string>

namespace jitfuse {

/// Writes \p Text as the dump `jitfuse_<key16>.<Ext>` in S.DumpDir, or to
/// stderr when no directory is set. Files are named after the cache key, so
/// names never collide and never carry user text.
void writeDump(const Settings &S, llvm::StringRef Key, llvm::StringRef Ext,
               llvm::StringRef Text);

} // namespace jitfuse
