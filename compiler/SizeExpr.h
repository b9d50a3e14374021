//===- compiler/SizeExpr.h - sizes as polynomials in dynamic dims -*- C++ -*-===//
#pragma once

#include "ir/Types.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse {

/// Static * product of dynamic dims (indices into Graph::dynamicDims()).
struct SizeExpr {
  int64_t Static = 1;
  std::vector<unsigned> Dims; // sorted

  static SizeExpr of(llvm::ArrayRef<Dim> S, llvm::ArrayRef<std::string> DynNames);
  /// Value for bound dims; saturates at INT64_MAX instead of overflowing.
  int64_t eval(llvm::ArrayRef<int64_t> DimValues) const;
  /// Throws when the static factor overflows.
  SizeExpr times(int64_t K) const;
};

/// A sum of SizeExprs with equal dim sets merged: "16384*B + 8192".
class SizeSum {
public:
  /// Both throw when a coefficient overflows.
  void add(const SizeExpr &E) { addTerm(E.Dims, E.Static); }
  void add(const SizeSum &O) {
    for (auto &[D, K] : O.Terms)
      addTerm(D, K);
  }
  /// Subtracts term by term (a difference of byte counts).
  void subtract(const SizeSum &O) {
    for (auto &[D, K] : O.Terms)
      addTerm(D, -K);
  }
  /// True when no term is negative: >= 0 for any dim values.
  bool nonNegative() const {
    for (auto &[D, K] : Terms)
      if (K < 0)
        return false;
    return true;
  }
  /// True when provably >= 0 for any dim values of at least 1 (a run with
  /// an empty dim moves no bytes): "4608*N - 1536" is, "N - 2" is not.
  /// Conservative: false where the proof fails (or a coefficient overflows).
  bool nonNegativeWhenNonEmpty() const;
  int64_t eval(llvm::ArrayRef<int64_t> DimValues) const;
  /// The value when it is the same for any dims (no term with a dynamic
  /// dim is nonzero), else nullopt.
  std::optional<int64_t> staticValue() const {
    int64_t V = 0;
    for (auto &[D, K] : Terms) {
      if (!D.empty() && K != 0)
        return std::nullopt;
      if (D.empty())
        V = K;
    }
    return V;
  }
  std::string str(llvm::ArrayRef<std::string> DynNames) const;

private:
  void addTerm(const std::vector<unsigned> &Dims, int64_t K);

  std::map<std::vector<unsigned>, int64_t> Terms;
};

} // namespace jitfuse
