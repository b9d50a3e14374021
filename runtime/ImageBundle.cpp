//===- runtime/ImageBundle.cpp - several CUBINs in one cache entry --------===//

#include "runtime/ImageBundle.h"

#include "support/Error.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <cstring>

namespace jitfuse::rt {

namespace {

void putU64(std::vector<char> &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xFF));
}

/// Reads little-endian integers and byte runs, never past the end.
class Reader {
public:
  explicit Reader(llvm::ArrayRef<char> Bytes) : Bytes(Bytes) {}
  bool u32(uint32_t &V) { return uint(V, 4); }
  bool u64(uint64_t &V) { return uint(V, 8); }
  bool bytes(uint64_t N, llvm::ArrayRef<char> &Out) {
    if (N > Bytes.size() - Pos)
      return false;
    Out = Bytes.slice(Pos, N);
    Pos += N;
    return true;
  }
  bool atEnd() const { return Pos == Bytes.size(); }

private:
  template <typename T> bool uint(T &V, size_t N) {
    if (N > Bytes.size() - Pos)
      return false;
    V = 0;
    for (size_t I = 0; I < N; ++I)
      V |= static_cast<T>(static_cast<unsigned char>(Bytes[Pos + I])) << (8 * I);
    Pos += N;
    return true;
  }

  llvm::ArrayRef<char> Bytes;
  size_t Pos = 0;
};

std::optional<std::vector<BundledImage>> bad(std::string *WhyNot, const char *Why) {
  if (WhyNot)
    *WhyNot = Why;
  return std::nullopt;
}

} // namespace

std::vector<char> bundleImages(llvm::ArrayRef<BundledImage> Parts) {
  JITFUSE_CHECK(!Parts.empty(), "a bundle needs at least one image");
  std::vector<char> Out(kImageBundleMagic, kImageBundleMagic + 8);
  uint32_t Count = static_cast<uint32_t>(Parts.size());
  for (int I = 0; I < 4; ++I)
    Out.push_back(static_cast<char>((Count >> (8 * I)) & 0xFF));
  for (const BundledImage &P : Parts) {
    std::string Names;
    for (const std::string &K : P.Kernels) {
      JITFUSE_CHECK(K.find('\n') == std::string::npos, "kernel names are identifiers");
      Names += K + "\n";
    }
    putU64(Out, Names.size());
    Out.insert(Out.end(), Names.begin(), Names.end());
    putU64(Out, P.Image.size());
    Out.insert(Out.end(), P.Image.begin(), P.Image.end());
  }
  return Out;
}

bool isImageBundle(llvm::ArrayRef<char> Blob) {
  return Blob.size() >= 8 && std::memcmp(Blob.data(), kImageBundleMagic, 8) == 0;
}

std::optional<std::vector<BundledImage>> parseImageBundle(llvm::ArrayRef<char> Blob,
                                                          std::string *WhyNot) {
  if (!isImageBundle(Blob))
    return bad(WhyNot, "not an image bundle (magic)");
  Reader R(Blob.drop_front(8));
  uint32_t Count = 0;
  if (!R.u32(Count))
    return bad(WhyNot, "image bundle truncated in its count");
  if (Count == 0)
    return bad(WhyNot, "image bundle with no images");
  std::vector<BundledImage> Parts;
  for (uint32_t I = 0; I < Count; ++I) {
    uint64_t N = 0, M = 0;
    llvm::ArrayRef<char> Names, Image;
    if (!R.u64(N) || !R.bytes(N, Names) || !R.u64(M) || !R.bytes(M, Image))
      return bad(WhyNot, "image bundle truncated");
    if (Image.empty())
      return bad(WhyNot, "image bundle with an empty image");
    BundledImage P;
    llvm::StringRef Rest(Names.data(), Names.size());
    if (!Rest.empty() && !Rest.endswith("\n"))
      return bad(WhyNot, "image bundle kernel names not newline-terminated");
    while (!Rest.empty()) {
      auto [Name, Tail] = Rest.split('\n');
      if (Name.empty())
        return bad(WhyNot, "image bundle with an empty kernel name");
      P.Kernels.push_back(Name.str());
      Rest = Tail;
    }
    P.Image.assign(Image.begin(), Image.end());
    Parts.push_back(std::move(P));
  }
  if (!R.atEnd())
    return bad(WhyNot, "image bundle with trailing bytes");
  return Parts;
}

} // namespace jitfuse::rt
