//===- reference/Parallel.cpp - the reference's loops over threads --------===//
#include "reference/Parallel.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace jitfuse {

void parallelFor(int64_t N, int64_t MinPerPiece,
                 llvm::function_ref<void(int64_t, int64_t)> Fn) {
  if (N <= 0)
    return;
  int64_t Threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 16);
  int64_t Pieces = std::min(Threads, N / std::max<int64_t>(MinPerPiece, 1));
  if (Pieces < 2) {
    Fn(0, N);
    return;
  }
  std::vector<std::exception_ptr> Errors(static_cast<size_t>(Pieces));
  auto Run = [&](int64_t P) {
    try {
      Fn(N * P / Pieces, N * (P + 1) / Pieces);
    } catch (...) {
      Errors[static_cast<size_t>(P)] = std::current_exception();
    }
  };
  std::vector<std::thread> Workers;
  Workers.reserve(static_cast<size_t>(Pieces - 1));
  for (int64_t P = 1; P < Pieces; ++P)
    Workers.emplace_back(Run, P);
  Run(0);
  for (std::thread &W : Workers)
    W.join();
  for (std::exception_ptr &E : Errors)
    if (E)
      std::rethrow_exception(E);
}

} // namespace jitfuse
