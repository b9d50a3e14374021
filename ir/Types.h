//===- ir/Types.h - dtypes, dims and shapes ---------------------*- C++ -*-===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace jitfuse {

/// Element types. Order matters only for printing.
enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };

inline constexpr DType boolean = DType::Bool;
inline constexpr DType i32 = DType::I32;
inline constexpr DType i64 = DType::I64;
inline constexpr DType f16 = DType::F16;
inline constexpr DType bf16 = DType::BF16;
inline constexpr DType f32 = DType::F32;
inline constexpr DType f64 = DType::F64;

llvm::StringRef dtypeName(DType T);
std::optional<DType> parseDType(llvm::StringRef Name);
unsigned dtypeBytes(DType T);
inline bool isFloat(DType T) {
  return T == DType::F16 || T == DType::BF16 || T == DType::F32 ||
         T == DType::F64;
}
inline bool isInt(DType T) { return T == DType::I32 || T == DType::I64; }

/// The type two tensors combine to (see docs/NUMERICS.md, "Promotion"):
/// bool < integers < floats by category; within floats f64 > f32 > {f16,bf16}
/// and f16 with bf16 gives f32; within integers i64 > i32.
DType promoteTypes(DType A, DType B);

/// A static dim (Size >= 0) or a dynamic one bound by name at run time. A
/// dynamic dim may be a product of names, "B*T" (a reshape of [B, T, H] to
/// [B*T, H]): its size is the product of the names' bound sizes. The factors
/// are kept sorted ("T*B" is "B*T"), so equal products compare equal.
struct Dim {
  int64_t Size = 0;
  std::string Name; // non-empty => dynamic

  Dim() = default;
  Dim(int64_t S) : Size(S) {}
  Dim(int S) : Size(S) {}
  Dim(const char *N) : Name(canonicalName(N)) {}
  Dim(std::string N) : Name(canonicalName(N)) {}

  /// The names a dynamic dim multiplies (one for a plain name); numbers
  /// among its factors ("64*B") are its scale().
  llvm::SmallVector<llvm::StringRef, 2> factors() const;
  /// The product of a dynamic dim's numeric factors (1 when it has none):
  /// its size is scale() times its names' bound sizes.
  int64_t scale() const;
  /// False for a dynamic name with an empty factor ("B**T", "*T"), without
  /// a name among its factors ("64", "2*3"), or with a numeric factor of 0
  /// or a scale beyond 2^48.
  bool validName() const;
  /// N with its '*'-separated factors sorted.
  static std::string canonicalName(llvm::StringRef N);

  bool isDynamic() const { return !Name.empty(); }
  bool isStatic(int64_t S) const { return !isDynamic() && Size == S; }
  bool operator==(const Dim &O) const {
    return isDynamic() ? O.Name == Name : (!O.isDynamic() && O.Size == Size);
  }
  bool operator!=(const Dim &O) const { return !(*this == O); }
  std::string str() const;
};

constexpr unsigned MaxRank = 4;
using Shape = llvm::SmallVector<Dim, 4>;

std::string shapeStr(llvm::ArrayRef<Dim> S);
/// The product of S as one dim: a number when S is static, else its names
/// times the product of its numbers ("64*B").
Dim productDim(llvm::ArrayRef<Dim> S);
/// Number of elements when all dims are static; nullopt otherwise.
std::optional<int64_t> staticNumel(llvm::ArrayRef<Dim> S);

/// The most elements one tensor may hold, with static dims (checked when a
/// node is built) or bound dynamic ones (checked by run() and the
/// interpreter). Element counts below it keep byte counts, and sums of them
/// over a whole plan, far from int64_t overflow.
constexpr int64_t MaxElements = int64_t(1) << 48;

/// The product of Sizes (each >= 0), or nullopt when the product of its
/// nonzero sizes exceeds MaxElements (overflow included): so every part of
/// an accepted shape, an empty one's too, holds at most MaxElements. Every
/// element count is formed through it; the caller throws, naming the shape.
std::optional<int64_t> boundedProduct(llvm::ArrayRef<int64_t> Sizes);
/// boundedProduct of the static dims of S (dynamic dims count as 1).
std::optional<int64_t> boundedStaticNumel(llvm::ArrayRef<Dim> S);
/// NumPy broadcast of two shapes; nullopt when they are incompatible.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<Dim> A,
                                     llvm::ArrayRef<Dim> B);
/// True when A and B provably hold the same number of elements: equal
/// products of their static dims and the same dynamic names. Two contiguous
/// tensors of such shapes list the same elements in the same order (what
/// reshape relabels).
bool sameNumel(llvm::ArrayRef<Dim> A, llvm::ArrayRef<Dim> B);
/// True when S has a static dim of 0: no elements for any dims' values.
bool emptyShape(llvm::ArrayRef<Dim> S);
/// True when shape From broadcasts to To without changing To.
bool broadcastsTo(llvm::ArrayRef<Dim> From, llvm::ArrayRef<Dim> To);

/// The strides (elements) of a contiguous tensor of shape S, each as a Dim:
/// nullopt where a stride multiplies static and named dims (4096 * "T" is
/// not a Dim), i.e. where no declared stride can equal it.
std::optional<Shape> contiguousStrides(llvm::ArrayRef<Dim> S);

/// The sizes of S when every dim is static; nullopt otherwise.
std::optional<llvm::SmallVector<int64_t, 4>> staticSizes(llvm::ArrayRef<Dim> S);

/// A strided tensor of Sizes at Strides (elements; both >= 0): the elements
/// its buffer spans (the largest offset plus one; 0 when it is empty), or
/// nullopt past MaxElements.
std::optional<int64_t> stridedSpan(llvm::ArrayRef<int64_t> Sizes,
                                   llvm::ArrayRef<int64_t> Strides);
/// Why an output of Sizes cannot be written at Strides, or "": two of its
/// elements would share an offset (a zero stride on a dim of more than one
/// element, or strides that interleave). Checks the sufficient condition
/// that strides sorted ascending each step past everything the smaller ones
/// span, as torch's internal-overlap check does for non-trivial cases.
std::string outputOverlap(llvm::ArrayRef<int64_t> Sizes, llvm::ArrayRef<int64_t> Strides);

} // namespace jitfuse
