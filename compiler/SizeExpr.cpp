//===- compiler/SizeExpr.cpp - sizes as polynomials in dynamic dims -------===//
#include "compiler/SizeExpr.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/Support/CheckedArithmetic.h>

#include <algorithm>

#include <climits>

namespace jitfuse {

SizeExpr SizeExpr::of(llvm::ArrayRef<Dim> S, llvm::ArrayRef<std::string> DynNames) {
  SizeExpr E;
  std::optional<int64_t> Static = boundedStaticNumel(S);
  if (!Static)
    fail("shape {} holds more than 2^48 elements", shapeStr(S));
  E.Static = *Static;
  for (const Dim &D : S) {
    if (!D.isDynamic())
      continue;
    E = E.times(D.scale());
    for (llvm::StringRef F : D.factors()) {
      auto It = std::find(DynNames.begin(), DynNames.end(), F);
      JITFUSE_CHECK(It != DynNames.end(), "dynamic dim not in the graph's list");
      E.Dims.push_back(static_cast<unsigned>(It - DynNames.begin()));
    }
  }
  std::sort(E.Dims.begin(), E.Dims.end());
  return E;
}

SizeExpr SizeExpr::times(int64_t K) const {
  SizeExpr R = *this;
  auto S = llvm::checkedMul(Static, K);
  if (!S)
    fail("size {} * {} overflows int64", Static, K);
  R.Static = *S;
  return R;
}

void SizeSum::addTerm(const std::vector<unsigned> &Dims, int64_t K) {
  int64_t &T = Terms[Dims];
  auto S = llvm::checkedAdd(T, K);
  if (!S)
    fail("size sum {} + {} overflows int64", T, K);
  T = *S;
}

static int64_t satMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return INT64_MAX;
  return R;
}

bool SizeSum::nonNegativeWhenNonEmpty() const {
  // Substitute each dim d = 1 + e (e >= 0; a monomial of dims expands to
  // products of (1 + e) with binomial coefficients): the polynomial is >= 0
  // for all e >= 0 when every coefficient in e is. Sufficient, not
  // necessary; in one dim, exact for the linear sums byte counts are.
  std::map<std::vector<unsigned>, int64_t> InE;
  for (auto &[D, K] : Terms) {
    if (K == 0)
      continue;
    // D is sorted: runs of one dim are its exponent. Enumerate every
    // sub-multiset with its coefficient prod C(exponent, k).
    std::vector<std::pair<unsigned, unsigned>> Runs; // dim, exponent
    for (unsigned X : D) {
      if (!Runs.empty() && Runs.back().first == X)
        ++Runs.back().second;
      else
        Runs.push_back({X, 1});
    }
    std::vector<std::pair<std::vector<unsigned>, int64_t>> Parts = {{{}, K}};
    for (auto [Dim, Exp] : Runs) {
      std::vector<std::pair<std::vector<unsigned>, int64_t>> Next;
      int64_t Binom = 1; // C(Exp, Pick)
      for (unsigned Pick = 0; Pick <= Exp; ++Pick) {
        for (auto &[Mono, Coef] : Parts) {
          int64_t C;
          if (__builtin_mul_overflow(Coef, Binom, &C))
            return false;
          std::vector<unsigned> M = Mono;
          M.insert(M.end(), Pick, Dim);
          Next.push_back({std::move(M), C});
        }
        Binom = Binom * (Exp - Pick) / (Pick + 1);
      }
      Parts = std::move(Next);
    }
    for (auto &[Mono, Coef] : Parts) {
      std::sort(Mono.begin(), Mono.end());
      if (__builtin_add_overflow(InE[Mono], Coef, &InE[Mono]))
        return false;
    }
  }
  for (auto &[Mono, Coef] : InE)
    if (Coef < 0)
      return false;
  return true;
}

int64_t SizeExpr::eval(llvm::ArrayRef<int64_t> DimValues) const {
  int64_t V = Static;
  for (unsigned D : Dims)
    V = satMul(V, DimValues[D]);
  return V;
}

int64_t SizeSum::eval(llvm::ArrayRef<int64_t> DimValues) const {
  int64_t Total = 0;
  for (auto &[D, K] : Terms) {
    SizeExpr E{K, D};
    if (__builtin_add_overflow(Total, E.eval(DimValues), &Total))
      return INT64_MAX;
  }
  return Total;
}

std::string SizeSum::str(llvm::ArrayRef<std::string> DynNames) const {
  std::string Out;
  // Highest-degree terms first reads like a formula.
  for (auto It = Terms.rbegin(); It != Terms.rend(); ++It) {
    if (It->second == 0)
      continue;
    // "a - b", not "a + -b".
    bool Minus = It->second < 0 && !Out.empty();
    std::string T = Minus ? std::to_string(-static_cast<uint64_t>(It->second))
                          : std::to_string(It->second);
    for (unsigned D : It->first)
      T += "*" + DynNames[D];
    Out += (Out.empty() ? "" : Minus ? " - " : " + ") + T;
  }
  return Out.empty() ? "0" : Out;
}

} // namespace jitfuse
