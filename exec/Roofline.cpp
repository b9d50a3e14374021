//===- exec/Roofline.cpp - per-kernel bytes, time and bandwidth -----------===//
#include "exec/Roofline.h"

#include "compiler/Plan.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse {

std::vector<KernelRoofline> kernelRoofline(const Executable &X, llvm::ArrayRef<int64_t> Dims,
                                           llvm::ArrayRef<double> MedianUs,
                                           double CeilingGBs) {
  llvm::ArrayRef<KernelInfo> Kernels = X.kernels();
  if (!MedianUs.empty() && MedianUs.size() != Kernels.size())
    fail("roofline: got {} kernel times, the executable has {} kernels", MedianUs.size(),
         Kernels.size());
  std::vector<int64_t> Bytes = X.kernelBytes(Dims);
  // Per launch: its kernels' bytes and how many kernels it runs.
  std::vector<int64_t> LaunchBytes(X.numLaunches(), 0);
  std::vector<unsigned> LaunchParts(X.numLaunches(), 0);
  for (size_t K = 0; K < Kernels.size(); ++K) {
    LaunchBytes[Kernels[K].Launch] += Bytes[K];
    ++LaunchParts[Kernels[K].Launch];
  }
  // A launch split at these dims runs its kernels one by one.
  for (unsigned L = 0; L < LaunchParts.size(); ++L)
    if (LaunchParts[L] > 1 && X.launchSplitAt(L, Dims))
      LaunchParts[L] = 1;
  std::vector<KernelRoofline> Rows;
  for (size_t K = 0; K < Kernels.size(); ++K) {
    KernelRoofline R;
    R.Name = Kernels[K].Name;
    R.Kind = Kernels[K].Kind;
    R.Bytes = Bytes[K];
    R.Launch = Kernels[K].Launch;
    R.SharedLaunch = LaunchParts[R.Launch] > 1;
    if (!MedianUs.empty()) {
      if (!(MedianUs[K] >= 0))
        fail("roofline: kernel {} ('{}') has time {} us; expected >= 0", K, R.Name,
             MedianUs[K]);
      R.MedianUs = MedianUs[K];
    }
    if (R.MedianUs > 0) {
      R.GBs = static_cast<double>(R.SharedLaunch ? LaunchBytes[R.Launch] : R.Bytes) /
              (R.MedianUs * 1e3);
      if (CeilingGBs > 0)
        R.PctCeiling = 100.0 * R.GBs / CeilingGBs;
    }
    Rows.push_back(std::move(R));
  }
  return Rows;
}

static std::string bytesText(int64_t B) {
  if (B >= (int64_t(1) << 30))
    return fmt::format("{:.2f} GiB", static_cast<double>(B) / (1 << 30));
  if (B >= (int64_t(1) << 20))
    return fmt::format("{:.1f} MiB", static_cast<double>(B) / (1 << 20));
  if (B >= 1024)
    return fmt::format("{:.1f} KiB", static_cast<double>(B) / 1024);
  return fmt::format("{} B", B);
}

std::string formatRoofline(llvm::ArrayRef<KernelRoofline> Rows, double CeilingGBs) {
  std::string Out = CeilingGBs > 0
                        ? fmt::format("roofline (ceiling {:.0f} GB/s):\n", CeilingGBs)
                        : std::string("roofline:\n");
  Out += fmt::format("  {:<28} {:<16} {:>11} {:>10} {:>8} {:>7}\n", "kernel", "level",
                     "bytes", "median us", "GB/s", "% ceil");
  int64_t TotalBytes = 0;
  double TotalUs = 0;
  bool AllTimed = !Rows.empty(), Shared = false;
  std::vector<bool> Counted;
  for (const KernelRoofline &R : Rows) {
    TotalBytes += R.Bytes;
    // A launch's time once, however many kernels share it (a launch split
    // at these dims shares nothing).
    if (R.Launch >= Counted.size())
      Counted.resize(R.Launch + 1, false);
    if (!R.SharedLaunch || !Counted[R.Launch])
      TotalUs += R.MedianUs;
    Counted[R.Launch] = true;
    Shared |= R.SharedLaunch;
    AllTimed &= R.MedianUs > 0;
    std::string Us = R.MedianUs > 0 ? fmt::format("{:.1f}", R.MedianUs) : "-";
    std::string GBs = R.MedianUs > 0 ? fmt::format("{:.0f}", R.GBs) : "-";
    std::string Pct = R.PctCeiling > 0 ? fmt::format("{:.0f}%", R.PctCeiling) : "-";
    Out += fmt::format("  {:<28} {:<16} {:>11} {:>10} {:>8} {:>7}\n",
                       R.SharedLaunch ? fmt::format("{} (L{})", R.Name, R.Launch) : R.Name,
                       clusterLevel(R.Kind).str(), bytesText(R.Bytes), Us, GBs, Pct);
  }
  std::string Us = AllTimed ? fmt::format("{:.1f}", TotalUs) : "-";
  double GBs = AllTimed && TotalUs > 0 ? static_cast<double>(TotalBytes) / (TotalUs * 1e3) : 0;
  if (Shared)
    Out += "  (LN: kernels that share launch N; their time and GB/s are the launch's)\n";
  Out += fmt::format("  {:<28} {:<16} {:>11} {:>10} {:>8} {:>7}\n",
                     Shared ? "total (sum of launches)" : "total (sum of kernels)", "",
                     bytesText(TotalBytes), Us, GBs > 0 ? fmt::format("{:.0f}", GBs) : "-",
                     GBs > 0 && CeilingGBs > 0 ? fmt::format("{:.0f}%", 100 * GBs / CeilingGBs)
                                               : "-");
  return Out;
}

} // namespace jitfuse
