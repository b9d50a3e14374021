//===- reference/Parallel.h - the reference's loops over threads -*- C++ -*-===//
//
// The fp64 reference of a long-row graph took ~9 s a run on one core (300
// rows of 50257, session 14), and the device machine's [gpu] tier spends
// most of its time there while 15 of its 16 cores idle. Each element (or
// row) of a loop below depends only on its index, so splitting the index
// range over threads changes no result: the reference stays bitwise
// deterministic whatever the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef JITFUSE_REFERENCE_PARALLEL_H
#define JITFUSE_REFERENCE_PARALLEL_H

#include <llvm/ADT/STLExtras.h>

#include <cstdint>

namespace jitfuse {

/// Calls \p Fn(Begin, End) on contiguous pieces that cover [0, \p N) once,
/// on up to min(hardware threads, 16) threads (the caller runs one piece),
/// each piece at least \p MinPerPiece indices; below 2 pieces, one call on
/// the caller's thread. An exception thrown by any piece is rethrown here
/// after every piece has finished.
void parallelFor(int64_t N, int64_t MinPerPiece,
                 llvm::function_ref<void(int64_t Begin, int64_t End)> Fn);

/// Indices a piece of element-wise work gets at least: thread start-up
/// (~20-50 us) stays small against 2^16 elements of fp64 math.
inline constexpr int64_t ReferenceElementsPerPiece = int64_t(1) << 16;

} // namespace jitfuse

#endif // JITFUSE_REFERENCE_PARALLEL_H
