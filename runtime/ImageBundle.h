//===- runtime/ImageBundle.h - several CUBINs in one cache entry -*- C++ -*-===//
//
// A graph's kernels may be compiled as several NVRTC programs in parallel
// (compile latency: see ARCHITECTURE.md, "Parallel compile"); the cache
// entry still holds one blob. A blob is either one CUBIN (an ELF image) or
// a bundle, all integers little-endian:
//
//   "JFBUNDLE"  u32 count
//   count x { u64 n, n bytes: kernel names, each followed by '\n';
//             u64 m, m bytes: the CUBIN that defines them }
//
// The parser is written for hostile input like the cache file parser: every
// defect is nullopt with a reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <optional>
#include <string>
#include <vector>

namespace jitfuse::rt {

struct BundledImage {
  std::vector<std::string> Kernels; // names defined by Image
  std::vector<char> Image;          // a CUBIN
};

inline constexpr char kImageBundleMagic[8] = {'J', 'F', 'B', 'U', 'N', 'D', 'L', 'E'};

/// The bundle of \p Parts (at least one; kernel names must not contain
/// '\n').
std::vector<char> bundleImages(llvm::ArrayRef<BundledImage> Parts);

/// True when \p Blob starts with the bundle magic (it may still be damaged).
bool isImageBundle(llvm::ArrayRef<char> Blob);

/// The parts of a bundle; nullopt and \p WhyNot (when non-null) on a wrong
/// magic, truncation, a zero count, an empty image or trailing bytes.
std::optional<std::vector<BundledImage>> parseImageBundle(llvm::ArrayRef<char> Blob,
                                                          std::string *WhyNot = nullptr);

} // namespace jitfuse::rt
