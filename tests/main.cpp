#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#if defined(__GLIBC__)
#include <malloc.h>

namespace {
/// The fp64 reference (reference/Interpreter.cpp) allocates and frees a
/// vector of doubles a node, 100+ MB at long rows. glibc maps each such
/// block fresh and unmaps it when freed, so every node paid its pages'
/// faults again: a third of a long-row reference's time (perf, 150 rows of
/// 50257). Large blocks come from the heap instead and freed memory stays
/// for the next node: the reference of that graph 2.4 -> 1.8 s, its error
/// bounds 9.2 -> 7.3 s on the 2-core development machine.
const bool KeepFreedMemory = [] {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();
} // namespace
#endif
