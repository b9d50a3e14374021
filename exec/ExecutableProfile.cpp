//===- exec/ExecutableProfile.cpp - per-kernel timing for the roofline ----===//
#include "exec/ExecutableImpl.h"

#include "support/Error.h"

#include <algorithm>

namespace jitfuse {

std::vector<double> Executable::profileKernels(llvm::ArrayRef<CUdeviceptr> Inputs,
                                               llvm::ArrayRef<CUdeviceptr> Outputs,
                                               llvm::ArrayRef<double> Scalars,
                                               llvm::ArrayRef<int64_t> Dims, CUstream Stream,
                                               unsigned Reps) {
  return Impl->profileKernels(Inputs, Outputs, Scalars, Dims, Stream, Reps);
}

std::vector<double> ExecutableImpl::profileKernels(llvm::ArrayRef<CUdeviceptr> In,
                                                   llvm::ArrayRef<CUdeviceptr> Out,
                                                   llvm::ArrayRef<double> Sc,
                                                   llvm::ArrayRef<int64_t> Dims,
                                                   CUstream Stream, unsigned Reps) {
  if (Reps == 0)
    fail("profileKernels: Reps is 0; expected at least 1 timed run");
  checkArgs(In, Out, Sc, Dims);
  makeCurrent();

  // One event before each kernel and one after the last: kernels on one
  // stream run back to back, so consecutive events bracket one kernel each.
  // Every plan in launch order, a horizontal launch's Alone ones after it.
  std::vector<LaunchPlan *> Plans;
  forEachPlan(Launches, [&](LaunchPlan &L) { Plans.push_back(&L); });
  size_t K = Plans.size();
  std::vector<rt::Event> Marks;
  Marks.reserve(K + 1);
  for (size_t I = 0; I <= K; ++I)
    Marks.emplace_back();
  std::vector<std::vector<double>> Samples(K);
  std::vector<bool> Skipped(K, false);
  // One untimed run first: module-load and first-touch costs stay out.
  for (unsigned R = 0; R <= Reps; ++R) {
    Marks[0].record(Stream);
    for (size_t I = 0; I < K; ++I) {
      LaunchPlan &L = *Plans[I];
      PreparedLaunch P = prepareLaunch(L, In, Out, Sc);
      Skipped[I] = P.Skip;
      if (!P.Skip)
        rt::launchKernel(P.Fn, P.Grid, P.Block, P.SharedBytes, Stream, L.ArgPtrs.data());
      Marks[I + 1].record(Stream);
    }
    Marks[K].synchronize();
    if (R == 0)
      continue;
    for (size_t I = 0; I < K; ++I)
      Samples[I].push_back(1e3 * rt::Event::elapsedMs(Marks[I], Marks[I + 1]));
  }
  std::vector<double> Median(K, 0.0);
  for (size_t I = 0; I < K; ++I) {
    if (Skipped[I])
      continue;
    std::vector<double> &S = Samples[I];
    std::nth_element(S.begin(), S.begin() + S.size() / 2, S.end());
    Median[I] = S[S.size() / 2];
  }
  // Per kernel: the kernels of one horizontal launch share its time, or,
  // where its parts ran alone, each has its own (the J-th kernel of the
  // launch is its J-th Alone plan: both are in kernel order).
  std::vector<size_t> First(Launches.size()); // each launch's index in Plans
  for (size_t I = 0, L = 0; I < K; ++I)
    if (L < Launches.size() && Plans[I] == &Launches[L])
      First[L++] = I;
  std::vector<unsigned> Seen(Launches.size(), 0);
  std::vector<double> PerKernel;
  for (const KernelInfo &Info : Kernels) {
    const LaunchPlan &L = Launches[Info.Launch];
    unsigned J = Seen[Info.Launch]++;
    bool Alone = !L.Alone.empty() && !L.Active;
    PerKernel.push_back(Median[First[Info.Launch] + (Alone ? 1 + J : 0)]);
  }
  return PerKernel;
}

} // namespace jitfuse
