//===- reference/Tolerance.cpp - the comparison rule of every GPU test ----===//
#include "reference/Tolerance.h"

#include "reference/Interpreter.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace jitfuse {

static std::string dimsStr(llvm::ArrayRef<int64_t> Dims) {
  std::string Out = "[";
  for (size_t I = 0; I < Dims.size(); ++I)
    Out += (I ? "," : "") + std::to_string(Dims[I]);
  return Out + "]";
}

/// rms over the finite elements; it scales the absolute part of the test so
/// that results near zero (a sum that cancels, x - mean) are judged against
/// the magnitude of the tensor rather than their own tiny value.
static double finiteRms(const HostTensor &T) {
  double SumSq = 0;
  int64_t Count = 0;
  for (double V : T.Data)
    if (std::isfinite(V)) {
      SumSq += V * V;
      ++Count;
    }
  return Count ? std::sqrt(SumSq / static_cast<double>(Count)) : 0.0;
}

/// Both comparisons; Bound is null for the plain rtol rule.
static CompareResult compareImpl(const HostTensor &Got, const HostTensor &Ref,
                                 const HostTensor *Bound, double Rtol,
                                 llvm::StringRef What) {
  CompareResult R;
  if (Got.Dims != Ref.Dims || Got.Data.size() != Ref.Data.size()) {
    R.Ok = false;
    R.Mismatches = static_cast<int64_t>(Ref.Data.size());
    R.Message = fmt::format("{}: shape {} ({} values) differs from the "
                            "reference shape {} ({} values)",
                            What.str(), dimsStr(Got.Dims), Got.Data.size(),
                            dimsStr(Ref.Dims), Ref.Data.size());
    return R;
  }
  if (Bound && (Bound->Dims != Ref.Dims ||
                Bound->Data.size() != Ref.Data.size()))
    fail("compareTensors: {}: the bound has shape {} ({} values); expected "
         "the reference shape {}",
         What.str(), dimsStr(Bound->Dims), Bound->Data.size(),
         dimsStr(Ref.Dims));
  bool Exact = !isFloat(Ref.Type);
  double Rms = finiteRms(Ref);
  constexpr int MaxShown = 5;
  std::string Shown;
  for (size_t I = 0; I < Ref.Data.size(); ++I) {
    double G = Got.Data[I], F = Ref.Data[I];
    bool Match;
    if (std::isnan(F))
      Match = std::isnan(G);
    else if (std::isinf(F) || Exact)
      Match = G == F;
    else
      Match = std::isfinite(G) &&
              std::fabs(G - F) <= Rtol * (std::fabs(F) + Rms);
    double Bd = Bound ? Bound->Data[I] : 0;
    if (Bound && Bd == std::numeric_limits<double>::infinity()) {
      ++R.Unconstrained;
      continue;
    }
    if (Match)
      continue;
    if (Bound && std::fabs(G - F) <= BoundSafety * Bd) {
      ++R.PassedByBound;
      continue;
    }
    if (R.Mismatches++ < MaxShown)
      Shown += fmt::format("\n  [{}] got {} ref {} (|diff| {:.3g}, allowed "
                           "{:.3g}{})",
                           I, G, F, std::fabs(G - F),
                           Rtol * (std::fabs(F) + Rms),
                           Bound ? fmt::format(" or {} x bound {:.3g}",
                                               BoundSafety, Bd)
                                 : "");
  }
  if (R.Mismatches == 0)
    return R;
  R.Ok = false;
  R.Message = fmt::format(
      "{}: {} of {} elements mismatch ({} {}, rtol {:.3g}, ref rms {:.3g}{}); "
      "first:{}{}",
      What.str(), R.Mismatches, Ref.Data.size(), dtypeName(Ref.Type).str(),
      dimsStr(Ref.Dims), Rtol, Rms,
      Bound ? fmt::format("; {} unconstrained, {} within the error bound "
                          "only",
                          R.Unconstrained, R.PassedByBound)
            : "",
      Shown, R.Mismatches > MaxShown ? "\n  ..." : "");
  return R;
}

CompareResult compareTensors(const HostTensor &Got, const HostTensor &Ref,
                             double Rtol, llvm::StringRef What) {
  return compareImpl(Got, Ref, nullptr, Rtol, What);
}

CompareResult compareTensors(const HostTensor &Got, const HostTensor &Ref,
                             const HostTensor &Bound, double Rtol,
                             llvm::StringRef What) {
  return compareImpl(Got, Ref, &Bound, Rtol, What);
}

double dtypeEpsilon(DType T) {
  switch (T) {
  case DType::F32: return std::ldexp(1.0, -23);
  case DType::F16: return std::ldexp(1.0, -10);
  case DType::BF16: return std::ldexp(1.0, -7);
  case DType::F64: return std::ldexp(1.0, -52);
  case DType::Bool:
  case DType::I32:
  case DType::I64: return 0;
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return 0;
}

double toleranceFor(DType Out, int64_t ReductionLength) {
  if (!isFloat(Out))
    return 0;
  // The stored value's own rounding (half types) does not grow with the
  // reduction; the f32 accumulation every kernel uses does, like sqrt(L).
  double Len = static_cast<double>(std::max<int64_t>(ReductionLength, 1));
  double Storage = dtypeBytes(Out) < 4 ? 8 * dtypeEpsilon(Out) : 0;
  return Storage + 8 * dtypeEpsilon(DType::F32) * (1 + std::sqrt(Len) / 4);
}

int64_t maxReductionLength(const Graph &G, NodeId Out,
                           const std::map<std::string, int64_t> &Dims) {
  if (Out >= G.size())
    fail("maxReductionLength: node %{} is not in the graph ({} nodes)", Out,
         G.size());
  // Walk the ancestors of Out; operands precede users, so one backwards
  // sweep over ids marks every node on a path into Out.
  std::vector<bool> OnPath(G.size(), false);
  OnPath[Out] = true;
  int64_t Longest = 1;
  for (NodeId Id = Out + 1; Id-- > 0;) {
    if (!OnPath[Id])
      continue;
    const Node &N = G.node(Id);
    for (NodeId Op : N.Operands)
      OnPath[Op] = true;
    if (!isReduction(N.Kind))
      continue;
    std::vector<int64_t> In = resolveShape(G.node(N.Operands[0]).Dims, Dims);
    int64_t Len = In.back();
    if (N.scope() == ReduceScope::All) {
      Len = numelOf(In);
    } else if (N.scope() == ReduceScope::Axes) {
      Len = 1;
      for (size_t I = 0; I < In.size(); ++I)
        if (N.reducedAxes() & (1u << I))
          Len *= In[I];
    }
    Longest = std::max(Longest, Len);
  }
  return Longest;
}

} // namespace jitfuse
