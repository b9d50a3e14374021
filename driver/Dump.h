//===- driver/Dump.h - JITFUSE_DUMP=graph,plan,cuda,ptx,cubin ---*- C++ -*-===//
#pragma once

#include "support/Settings.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <functional>
#include <string>

namespace jitfuse {

/// Writes \p Text as the dump `jitfuse_<key16>.<Ext>` in S.DumpDir, or to
/// stderr when no directory is set. Files are named after the cache key, so
/// names never collide and never carry user text.
void writeDump(const Settings &S, llvm::StringRef Key, llvm::StringRef Ext,
               llvm::StringRef Text);

/// Writes the CUBINs of a cache entry's image \p Image in S.DumpDir:
/// `jitfuse_<key16>.cubin` for one CUBIN, `jitfuse_<key16>.<i>.cubin` for
/// part i of an image bundle (runtime/ImageBundle.h). CUBINs are binary, so
/// without a directory nothing is written and one warning says so.
void writeCubinDump(const Settings &S, llvm::StringRef Key, llvm::ArrayRef<char> Image);

} // namespace jitfuse
