//===- ir/ReduceForm.cpp - the kernels a reduction over axes runs as -----===//
#include "ir/ReduceForm.h"

namespace jitfuse {

bool isInnerAxes(uint32_t Mask, unsigned Rank) {
  if (Mask == 0 || Rank == 0)
    return false;
  uint32_t All = (1u << Rank) - 1;
  // The set bits form one run that ends at the last axis: adding the lowest
  // set bit carries through the run to bit Rank.
  return (Mask & ~All) == 0 && ((Mask + (Mask & -Mask)) & All) == 0;
}

/// The stages after the top level's special cases.
static void lowered(llvm::ArrayRef<Dim> S, uint32_t Mask,
                    llvm::SmallVector<ReduceStage, 2> &Out) {
  unsigned Rank = static_cast<unsigned>(S.size());
  int Last = -1; // the innermost axis with more than one element
  bool AnyBig = false;
  for (unsigned I = 0; I < Rank; ++I) {
    if (S[I].isStatic(1))
      continue;
    Last = static_cast<int>(I);
    AnyBig |= (Mask >> I) & 1u;
  }
  if (!AnyBig)
    return;
  if (!((Mask >> Last) & 1u)) {
    Out.push_back({false, Mask});
    return;
  }
  unsigned Start = static_cast<unsigned>(Last);
  while (Start > 0 && ((Mask >> (Start - 1)) & 1u))
    --Start;
  bool Outside = false;
  for (unsigned I = 0; I < Start; ++I)
    Outside |= ((Mask >> I) & 1u) && !S[I].isStatic(1);
  std::optional<int64_t> Run = staticNumel(S.drop_front(Start));
  if (!Outside || (Run && *Run < MinFirstStageRun)) {
    Out.push_back({true, Mask});
    return;
  }
  // The run (with the size-1 axes after it) first, then the rest on the
  // result, whose run axes are 1.
  uint32_t RunMask = ((1u << Rank) - 1) & ~((1u << Start) - 1);
  Out.push_back({true, RunMask});
  Shape Next(S.begin(), S.end());
  for (unsigned I = Start; I < Rank; ++I)
    Next[I] = Dim(1);
  lowered(Next, Mask & ((1u << Start) - 1), Out);
}

llvm::SmallVector<ReduceStage, 2> reduceStages(llvm::ArrayRef<Dim> S, uint32_t Mask) {
  llvm::SmallVector<ReduceStage, 2> Out;
  unsigned Rank = static_cast<unsigned>(S.size());
  if (isColumnAxes(Mask, Rank)) {
    Out.push_back({false, Mask});
    return Out;
  }
  if (isInnerAxes(Mask, Rank)) {
    Out.push_back({true, Mask});
    return Out;
  }
  lowered(S, Mask, Out);
  return Out;
}

} // namespace jitfuse
