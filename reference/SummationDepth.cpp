//===- reference/SummationDepth.cpp - the kernels' summation depths -------===//
//
// The longest chain of roundings in the kernels' sums (row, flat and
// column reductions), from their launch rules; the error bound's gamma
// factor (reference/ErrorBound.h) reads them.
//
//===----------------------------------------------------------------------===//
#include "reference/ErrorBound.h"

#include "codegen/LaunchRule.h"

#include <algorithm>

namespace jitfuse {

int64_t columnSummationDepth(int64_t L, int64_t Cols) {
  // Column kernels (codegen/ColumnReduce.h): the L rows are cut into
  // S = columnSplits(L, Cols) splits of K = ceil(L / S) rows (ceil(L / K)
  // of them hold rows; an empty one adds the identity, exactly). In a split,
  // each of n = ColumnRowThreads threads sums every n-th row in order (at
  // most ceil(K / n) terms, the first exact: ceil(K / n) - 1 roundings),
  // then the min(n, K) threads holding rows are added in order (min(n, K) -
  // 1 more), then the splits' partials in order (ceil(L / K) - 1 more). Any
  // order has depth <= L - 1.
  constexpr int64_t N = codegen::launch::ColumnRowThreads;
  if (L <= 1)
    return 0;
  int64_t S = codegen::columnSplits(L, Cols);
  int64_t K = (L + S - 1) / S;
  int64_t D = (K + N - 1) / N - 1 + (std::min(N, K) - 1) + ((L + K - 1) / K - 1);
  // A row kernel may compute the column instead (CompileOptions::
  // MixOrderColumns, for the row lengths launch::mixColumns allows, or
  // with CompileOptions::MixMinColumns mixColumnsAny; with several rows a
  // block, KernelPlan::RowsPerBlock, its order is no deeper): the bound
  // holds for either plan.
  if (codegen::launch::mixColumnsAny(Cols))
    D = std::max(D, mixColumnSummationDepth(L));
  return std::min<int64_t>(L - 1, D);
}

int64_t mixColumnSummationDepth(int64_t L, int64_t MaxGroups, int64_t SubRows) {
  // codegen/MixColumns.cpp: each group's Kg = mixRowsPerGroup(L, MaxGroups,
  // SubRows) rows, row y of the block every SubRows-th from y in order
  // (ceil(Kg / SubRows) - 1 roundings), then the block's min(SubRows, Kg)
  // rows in order; then MixCombineRows threads each every 8th of the Ng =
  // mixGroups(L, ...) groups' partials (ceil(Ng / 8) - 1), then those in
  // order (min(8, Ng) - 1).
  namespace launch = codegen::launch;
  constexpr int64_t M = launch::MixCombineRows;
  if (L <= 1)
    return 0;
  int64_t Kg = launch::mixRowsPerGroup(L, MaxGroups, SubRows);
  int64_t Ng = launch::mixGroups(L, MaxGroups, SubRows);
  int64_t Group = (Kg + SubRows - 1) / SubRows - 1 + std::min(SubRows, Kg) - 1;
  return std::min<int64_t>(L - 1, Group + (Ng + M - 1) / M - 1 + (std::min(M, Ng) - 1));
}

int64_t mixColumnSummationDepth(int64_t L) {
  // Any plan the schedule may make: the group count launch::mixGroupsFor
  // a block of any thread count (a multiple of a warp), rows a block 1 to
  // MixBlockRowsMax (groups of at least as many rows).
  namespace launch = codegen::launch;
  int64_t D = 0;
  for (int T = 32; T <= 1024; T += 32)
    for (int64_t S = 1; S <= launch::MixBlockRowsMax; ++S)
      D = std::max(D, mixColumnSummationDepth(L, launch::mixGroupsFor(T), S));
  return D;
}

int64_t summationDepth(int64_t L) {
  // The kernels sum per thread over a strided run, then in a warp/block
  // shuffle tree (full reductions: per block, then over the blocks'
  // partials). The thread counts are the launch rules' (codegen/LaunchRule.h):
  // a static row of up to 4 * MaxRowThreads chunks gives each thread at most
  // MaxChunksPerThread chunks of at most MaxLanes elements, a dynamic row
  // whose threads the launch picks at most DynamicRowMaxChunks below
  // MaxRowThreads threads; any other run (longer rows, flat work, a dynamic
  // row at its fixed DynamicRowThreads) has at least MinLongRunThreads
  // threads, so at most ceil(L / MinLongRunThreads) terms per thread. A tree
  // adds at most ceil(log2 L) levels that see data. Adding the identity is
  // exact and does not count. Any order has depth <= L - 1.
  namespace launch = codegen::launch;
  constexpr int64_t MaxLanes = launch::MaxVectorBytes / 2; // 2-byte elements
  constexpr int64_t ShortRun =
      std::max(launch::MaxChunksPerThread, launch::DynamicRowMaxChunks) * MaxLanes;
  constexpr int64_t MinLongRunThreads =
      std::min({launch::FlatThreads, launch::DynamicRowThreads, launch::MaxRowThreads});
  if (L <= 1)
    return 0;
  int64_t Log2 = 0;
  while ((int64_t(1) << Log2) < L)
    ++Log2;
  return std::min<int64_t>(L - 1, Log2 + ShortRun + (L + MinLongRunThreads - 1) /
                                                        MinLongRunThreads);
}

} // namespace jitfuse
