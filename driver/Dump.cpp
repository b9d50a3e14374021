//===- driver/Dump.cpp - JITFUSE_DUMP=graph,plan,cuda,ptx,cubin -----------===//
#include "driver/Dump.h"

#include "runtime/CacheIO.h"
#include "runtime/ImageBundle.h"
#include "support/Log.h"

#include <fmt/format.h>

#include <cassert>
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

void writeCubinDump(const Settings &S, llvm::StringRef Key, llvm::ArrayRef<char> Image) {
  if (S.DumpDir.empty()) {
    warnOnce("dump-cubin-stderr", "JITFUSE_DUMP=cubin writes CUBINs only to a directory; set "
                                  "JITFUSE_DUMP_DIR (no CUBIN written)");
    return;
  }
  auto Bytes = [](llvm::ArrayRef<char> B) { return llvm::StringRef(B.data(), B.size()); };
  if (!rt::isImageBundle(Image)) {
    writeDump(S, Key, "cubin", Bytes(Image));
    return;
  }
  std::string Why;
  std::optional<std::vector<rt::BundledImage>> Parts = rt::parseImageBundle(Image, &Why);
  // The image came from this process's compile or a checksummed cache
  // entry; a bundle that does not parse is a bug, not a user error.
  assert(Parts && "a cache entry's image bundle does not parse");
  if (!Parts) {
    warnOnce("dump-cubin-bundle", "JITFUSE_DUMP=cubin: the image bundle does not parse (" + Why +
                                      "); no CUBIN written");
    return;
  }
  for (size_t I = 0; I < Parts->size(); ++I)
    writeDump(S, Key, fmt::format("{}.cubin", I), Bytes((*Parts)[I].Image));
}

} // namespace jitfuse
