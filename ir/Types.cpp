//===- ir/Types.cpp - dtypes, dims and shapes -----------------------------===//
#include "ir/Types.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CheckedArithmetic.h>

#include <algorithm>

namespace jitfuse {

llvm::StringRef dtypeName(DType T) {
  switch (T) {
  case DType::Bool: return "bool";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return "?";
}

std::optional<DType> parseDType(llvm::StringRef Name) {
  for (DType T : {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16,
                  DType::F32, DType::F64})
    if (dtypeName(T) == Name)
      return T;
  return std::nullopt;
}

unsigned dtypeBytes(DType T) {
  switch (T) {
  case DType::Bool: return 1;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::I32:
  case DType::F32: return 4;
  case DType::I64:
  case DType::F64: return 8;
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return 0;
}

static int category(DType T) { return isFloat(T) ? 2 : isInt(T) ? 1 : 0; }

DType promoteTypes(DType A, DType B) {
  if (A == B)
    return A;
  if (category(A) != category(B))
    return category(A) > category(B) ? A : B;
  if (isInt(A))
    return DType::I64; // i32 with i64
  // Two different floats.
  if (A == DType::F64 || B == DType::F64)
    return DType::F64;
  return DType::F32; // f32 with a half type, or f16 with bf16
}

static bool isNumber(llvm::StringRef F) {
  return !F.empty() && llvm::all_of(F, [](char C) { return C >= '0' && C <= '9'; });
}

llvm::SmallVector<llvm::StringRef, 2> Dim::factors() const {
  llvm::SmallVector<llvm::StringRef, 2> All, F;
  if (isDynamic())
    llvm::StringRef(Name).split(All, '*');
  for (llvm::StringRef X : All)
    if (!isNumber(X))
      F.push_back(X);
  return F;
}

int64_t Dim::scale() const {
  // canonicalName folds the numbers of a valid name into its first factor.
  llvm::StringRef First = llvm::StringRef(Name).split('*').first;
  unsigned long long V = 0;
  if (!isNumber(First) || First.getAsInteger(10, V) || V > (1ull << 48))
    return 1;
  return static_cast<int64_t>(V);
}

bool Dim::validName() const {
  if (!isDynamic())
    return true;
  llvm::SmallVector<llvm::StringRef, 2> All;
  llvm::StringRef(Name).split(All, '*');
  // A valid name holds at most one number, first (canonicalName), in
  // [1, 2^48].
  bool Named = false;
  for (size_t I = 0; I < All.size(); ++I) {
    llvm::StringRef X = All[I];
    if (X.empty() || (isNumber(X) && I > 0))
      return false;
    Named |= !isNumber(X);
    unsigned long long V = 0;
    if (isNumber(X) && (X.getAsInteger(10, V) || V == 0 || V > (1ull << 48)))
      return false;
  }
  return Named;
}

std::string Dim::canonicalName(llvm::StringRef N) {
  if (!N.contains('*'))
    return N.str();
  llvm::SmallVector<llvm::StringRef, 4> F, Names;
  N.split(F, '*');
  // The numbers multiply into one, written first ("2*B*3" is "6*B"), so
  // equal products are one name; a name validName rejects (an empty
  // factor, no name, a 0 or a scale past 2^48) stays as written, sorted.
  uint64_t K = 1;
  bool Folds = true;
  for (llvm::StringRef X : F) {
    unsigned long long V = 0;
    if (!isNumber(X))
      Folds &= !X.empty();
    else if (X.getAsInteger(10, V) || V == 0 || V > (1ull << 48) / K)
      Folds = false;
    else
      K *= V;
    if (!isNumber(X))
      Names.push_back(X);
  }
  if (!Folds || Names.empty()) {
    std::sort(F.begin(), F.end());
    return llvm::join(F, "*");
  }
  std::sort(Names.begin(), Names.end());
  std::string Out = llvm::join(Names, "*");
  return K == 1 ? Out : std::to_string(K) + "*" + Out;
}

std::string Dim::str() const {
  return isDynamic() ? Name : std::to_string(Size);
}

std::string shapeStr(llvm::ArrayRef<Dim> S) {
  std::string Out = "[";
  for (size_t I = 0; I < S.size(); ++I)
    Out += (I ? "," : "") + S[I].str();
  return Out + "]";
}

Dim productDim(llvm::ArrayRef<Dim> S) {
  int64_t Static = 1;
  std::string Names;
  for (const Dim &D : S) {
    if (D.isDynamic())
      Names += (Names.empty() ? "" : "*") + D.Name;
    else
      Static *= D.Size; // the builder bounds every static product by 2^48
  }
  if (Names.empty() || Static == 0)
    return Dim(Static);
  return Static == 1 ? Dim(Names) : Dim(std::to_string(Static) + "*" + Names);
}

std::optional<int64_t> staticNumel(llvm::ArrayRef<Dim> S) {
  for (const Dim &D : S)
    if (D.isDynamic())
      return std::nullopt;
  // The builder holds every static shape to MaxElements.
  std::optional<int64_t> N = boundedStaticNumel(S);
  JITFUSE_CHECK(N.has_value(), "static shape beyond MaxElements escaped the builder");
  return N;
}

bool emptyShape(llvm::ArrayRef<Dim> S) {
  return llvm::any_of(S, [](const Dim &D) { return !D.isDynamic() && D.Size == 0; });
}

bool sameNumel(llvm::ArrayRef<Dim> A, llvm::ArrayRef<Dim> B) {
  if (A == B)
    return true;
  auto Split = [](llvm::ArrayRef<Dim> S, std::optional<int64_t> &Static,
                  std::vector<std::string> &Names) {
    Static = boundedStaticNumel(S);
    for (const Dim &D : S) {
      if (!D.isDynamic())
        continue;
      for (llvm::StringRef F : D.factors())
        Names.push_back(F.str());
      if (Static)
        Static = boundedProduct({*Static, D.scale()});
    }
    std::sort(Names.begin(), Names.end());
  };
  std::optional<int64_t> SA, SB;
  std::vector<std::string> NA, NB;
  Split(A, SA, NA);
  Split(B, SB, NB);
  return SA && SB && *SA == *SB && NA == NB;
}

std::optional<int64_t> boundedProduct(llvm::ArrayRef<int64_t> Sizes) {
  // The nonzero sizes' product is bounded whatever their order: a 0 first
  // used to hide the rest ([0, 2^49] passed, [2^49, 0] did not), and a
  // part of such a shape (a reduction's run of axes) then held more than
  // MaxElements.
  int64_t N = 1;
  bool Empty = false;
  for (int64_t Size : Sizes) {
    JITFUSE_CHECK(Size >= 0, "sizes are checked to be >= 0 first");
    if (Size == 0) {
      Empty = true;
      continue;
    }
    auto P = llvm::checkedMul(N, Size);
    if (!P || *P > MaxElements)
      return std::nullopt;
    N = *P;
  }
  return Empty ? 0 : N;
}

std::optional<int64_t> boundedStaticNumel(llvm::ArrayRef<Dim> S) {
  llvm::SmallVector<int64_t, 4> Sizes;
  for (const Dim &D : S)
    if (!D.isDynamic())
      Sizes.push_back(D.Size);
  return boundedProduct(Sizes);
}

std::optional<Shape> broadcastShapes(llvm::ArrayRef<Dim> A,
                                     llvm::ArrayRef<Dim> B) {
  size_t R = std::max(A.size(), B.size());
  Shape Out(R);
  for (size_t I = 0; I < R; ++I) {
    // Align from the right.
    const Dim *DA = I < R - A.size() ? nullptr : &A[I - (R - A.size())];
    const Dim *DB = I < R - B.size() ? nullptr : &B[I - (R - B.size())];
    if (!DA || DA->isStatic(1)) {
      Out[I] = DB ? *DB : Dim(1);
      continue;
    }
    if (!DB || DB->isStatic(1) || *DA == *DB) {
      Out[I] = *DA;
      continue;
    }
    return std::nullopt;
  }
  return Out;
}

bool broadcastsTo(llvm::ArrayRef<Dim> From, llvm::ArrayRef<Dim> To) {
  auto B = broadcastShapes(From, To);
  return B && llvm::ArrayRef<Dim>(*B) == To;
}

std::optional<Shape> contiguousStrides(llvm::ArrayRef<Dim> S) {
  Shape Out(S.size());
  int64_t Static = 1;
  std::string Names;
  bool Expressible = true;
  for (size_t I = S.size(); I-- > 0;) {
    if (!Expressible)
      return std::nullopt;
    Out[I] = Names.empty() ? Dim(Static) : Dim(Names);
    const Dim &D = S[I];
    if (D.isDynamic())
      Names += (Names.empty() ? "" : "*") + D.Name;
    else
      Static *= D.Size;
    // A stride above this dim mixes a static factor (other than 1) with names.
    Expressible = Names.empty() || Static == 1 || I == 0;
  }
  return Out;
}

std::optional<llvm::SmallVector<int64_t, 4>> staticSizes(llvm::ArrayRef<Dim> S) {
  llvm::SmallVector<int64_t, 4> Sizes;
  for (const Dim &D : S) {
    if (D.isDynamic())
      return std::nullopt;
    Sizes.push_back(D.Size);
  }
  return Sizes;
}

std::optional<int64_t> stridedSpan(llvm::ArrayRef<int64_t> Sizes,
                                   llvm::ArrayRef<int64_t> Strides) {
  int64_t Last = 0;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] == 0)
      return 0;
    auto Step = llvm::checkedMul(Sizes[I] - 1, Strides[I]);
    if (!Step)
      return std::nullopt;
    auto Sum = llvm::checkedAdd(Last, *Step);
    if (!Sum || *Sum >= MaxElements)
      return std::nullopt;
    Last = *Sum;
  }
  return Last + 1;
}

std::string outputOverlap(llvm::ArrayRef<int64_t> Sizes, llvm::ArrayRef<int64_t> Strides) {
  llvm::SmallVector<unsigned, 4> Order;
  for (unsigned I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] == 0)
      return ""; // no elements, nothing to overlap
    if (Sizes[I] > 1)
      Order.push_back(I);
  }
  std::stable_sort(Order.begin(), Order.end(),
                   [&](unsigned A, unsigned B) { return Strides[A] < Strides[B]; });
  int64_t Spanned = 0; // the largest offset the dims before reach
  for (unsigned I : Order) {
    if (Strides[I] == 0)
      return fmt::format("dim {} has {} elements and stride 0, so they share one offset", I,
                         Sizes[I]);
    if (Strides[I] <= Spanned)
      return fmt::format("dim {} (stride {}) steps inside the {} elements the smaller "
                         "strides span, so elements would share offsets",
                         I, Strides[I], Spanned + 1);
    Spanned += (Sizes[I] - 1) * Strides[I]; // bounded: stridedSpan is checked first
  }
  return "";
}

} // namespace jitfuse
