//===- driver/Dump.cpp - JITFUSE_DUMP=graph,plan,cuda,ptx -----------------===//
#include "driver/Dump.h"

#include "runtime/CacheIO.h"
#include "support/Log.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace jitfuse {

void writeDump(const Settings &S, llvm::StringRef Key, llvm::StringRef Ext,
               llvm::StringRef Text) {
  if (S.DumpDir.empty()) {
    std::fprintf(stderr, "===== jitfuse %s %s =====\n%.*s", Key.substr(0, 12).str().c_str(),
                 Ext.str().c_str(), static_cast<int>(Text.size()), Text.data());
    return;
  }
  std::error_code EC;
  std::filesystem::create_directories(S.DumpDir, EC);
  std::string Path = fmt::format("{}/jitfuse_{}.{}", S.DumpDir, Key.substr(0, 16).str(), Ext.str());
  // Temp file + rename: whatever sits at Path (a planted symlink to a
  // victim, a FIFO that would block the open) is replaced, never opened.
  std::string Err = rt::writeFileAtomically(Path, Text);
  if (!Err.empty())
    warnOnce("dump-dir:" + S.DumpDir,
             fmt::format("could not write dump file '{}' ({})", Path, Err));
}

} // namespace jitfuse
