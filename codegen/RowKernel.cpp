//===- codegen/RowKernel.cpp - the row-reduction kernel skeleton ----------===//
//
// A row kernel walks its row once per reduction stage (max, then the sum of
// exp(x - max), then the epilogue for softmax), keeping the row's loads and
// the values later stages need again in registers when they fit. Peeled
// rows run their whole chunks aligned to a lead tensor, then their head and
// tail elements one per thread; a row split over a cluster combines its
// blocks' results through distributed shared memory.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"
#include "codegen/LaunchRule.h"

#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace jitfuse::codegen {

std::string KernelWriter::rowChunk() const {
  // A row split over a cluster: block `jf_rank` takes every ClusterX-th span
  // of ThreadsX chunks.
  std::string IT = E.indexType();
  if (P.ClusterX > 1)
    return fmt::format("((({0})j * {1} + jf_rank) * {2} + tx)", IT, P.ClusterX, P.ThreadsX);
  return fmt::format("(({0})j * {1} + tx)", IT, P.ThreadsX);
}

int64_t KernelWriter::staticRowIters() const {
  int64_t Span = int64_t(P.ThreadsX) * Vec * P.ClusterX;
  return (P.Domain.back().Size + Span - 1) / Span;
}

std::string KernelWriter::inRangeIters(int64_t MinChunks) const {
  // Iteration j's chunks are below (j + 1) x ThreadsX x ClusterX. Guarded
  // only by `col < R`, every iteration of the unrolled loop kept its own
  // predicate, and ptxas issued each chunk's loads after the previous
  // chunk's math (add + RMSNorm f32 x 32064 also spilled 16 bytes).
  // Rows kept in registers only: a re-read row's loop, unguarded, had its
  // loads hoisted across every iteration and spilled at 64 registers
  // (bf16 x 128256 at 1024 threads). Nor with AlignedRowCopy (off, an
  // experiment): its two copies of the loops spilled at LayerNorm f32
  // x 4096's 40 registers.
  if (!P.CacheRow || P.AlignedRowCopy)
    return "";
  int64_t Safe = std::max<int64_t>(MinChunks, 0) / (int64_t(P.ThreadsX) * P.ClusterX);
  return Safe > 0 ? fmt::format("j < {} || ", Safe) : std::string();
}

void KernelWriter::dynamicLoopUnroll() {
  // A loop over a run-time row strided by a constant thread count is
  // unrolled 4 times by NVVM (its trip count a shift away); strided by
  // blockDim.x (ThreadsAtLaunch) it was not (add + RMSNorm f32: 16 loads in
  // the PTX against 44, 32 registers against 48; 0.90x the fixed 256 threads
  // at 10922 x 6144, the same count). The pragma asks for the same unroll;
  // each thread still adds its chunks in order.
  if (P.ThreadsAtLaunch)
    E.line("#pragma unroll 4");
}

void KernelWriter::rowLoop(const std::function<void()> &Body, bool OwnChunks) {
  std::string IT = E.indexType();
  int64_t Span = int64_t(P.ThreadsX) * Vec * P.ClusterX;
  const Dim &R = P.Domain.back();
  if (Peel) {
    // Whole chunks only, aligned to the lead (no lane checks, no partial
    // copy of the body: a warp holding a row's first or last chunk ran both
    // copies, and the chunk a shifted row adds was re-read in every stage);
    // the row's head and tail elements follow, one per thread.
    auto WholeChunks = [&] {
      E.setChunk(ChunkKind::Whole);
      if (R.isDynamic()) {
        dynamicLoopUnroll();
        E.open(fmt::format("for ({0} j = 0; ({0})j * {1} + tx < jf_nw; ++j)", IT, rowThreads()));
        E.line(fmt::format("[[maybe_unused]] const {0} col = jf_h + (({0})j * {1} + tx) * {2};",
                           IT, rowThreads(), Vec));
        Body();
        E.close();
      } else {
        int64_t Iters = staticRowIters();
        if (Iters <= 16)
          E.line("#pragma unroll");
        E.open(fmt::format("for (int j = 0; j < {}; ++j)", Iters));
        E.line(fmt::format("const {} jf_c = {};", IT, rowChunk()));
        // At any offset the row has at least (R - Vec + 1) / Vec whole chunks.
        E.open("if (" + inRangeIters((R.Size - (Vec - 1)) / Vec) + "jf_c < jf_nw)");
        E.line(fmt::format("[[maybe_unused]] const {} col = jf_h + jf_c * {};", IT, Vec));
        Body();
        E.close();
        E.close();
      }
      E.setChunk(ChunkKind::Either);
    };
    if (AlignedCopy) {
      // jf_al is warp-uniform: no warp runs both copies. A loop whose
      // chunked accesses are all the lead's is the same in both: once.
      size_t Mark = E.text().size();
      unsigned Hits = E.alignedHits();
      E.open("if (jf_al)");
      E.setAlignedCopy(&AlignedAddrs, nullptr);
      WholeChunks();
      E.setAlignedCopy(nullptr, nullptr);
      E.close();
      if (E.alignedHits() == Hits) {
        E.text().resize(Mark);
        WholeChunks();
      } else {
        E.open("else");
        WholeChunks();
        E.close();
      }
    } else {
      WholeChunks();
    }
    if (OwnChunks)
      return;
    const std::map<std::string, std::string> *Cache = E.rowCache();
    E.setRowCache(nullptr);
    ScalarPart = true;
    E.setKeptActive(false);
    E.setScalarLoads(true, ScalarCache.empty() ? nullptr : &ScalarCache);
    // With enough threads each takes at most one element (the cached case;
    // a launch's choice is at least DynamicRowMinThreads, 2 * 15 and more).
    static_assert(launch::DynamicRowMinThreads >= 2 * (launch::MaxVectorBytes - 1));
    if (P.ThreadsX >= 2 * (Vec - 1))
      E.open("if (" + rankZero("tx < jf_ns") + ")");
    else
      E.open(fmt::format("for (int jf_e = tx; jf_e < jf_ns; jf_e += {})", P.ThreadsX));
    if (P.ThreadsX >= 2 * (Vec - 1))
      E.line("const int jf_e = tx;");
    E.line(fmt::format("[[maybe_unused]] const {0} col = jf_e < jf_h ? ({0})jf_e : jf_e + jf_nw * {1};", IT,
                       Vec));
    Body();
    E.close();
    ScalarPart = false;
    E.setScalarLoads(false, nullptr);
    E.setKeptActive(true);
    E.setRowCache(Cache);
    return;
  }
  if (R.isDynamic()) {
    dynamicLoopUnroll();
    E.open(fmt::format("for ({0} j = 0; (({0})j * {1} + tx) * {2} < R; ++j)", IT,
                       rowThreads(), Vec));
    E.line(fmt::format("[[maybe_unused]] const {0} col = (({0})j * {1} + tx) * {2};", IT,
                       rowThreads(), Vec));
    Body();
    E.close();
    return;
  }
  int64_t Iters = staticRowIters();
  if (Iters <= 16)
    E.line("#pragma unroll");
  E.open(fmt::format("for (int j = 0; j < {}; ++j)", Iters));
  E.line(fmt::format("[[maybe_unused]] const {} col = {} * {};", IT, rowChunk(), Vec));
  if (R.Size % Span != 0) {
    E.open("if (" + inRangeIters(R.Size / Vec) + "col < R)");
    Body();
    E.close();
  } else {
    Body();
  }
  E.close();
}

void KernelWriter::rowStages(const std::map<NodeId, int> &Stages) {
  const int NumStages = stageCount(Stages);
  for (int S = 0; S < NumStages; ++S) {
    std::vector<NodeId> Reds;
    for (NodeId N : P.Nodes)
      if (auto It = Stages.find(N); It != Stages.end() && It->second == S)
        Reds.push_back(N);
    const size_t StageMark = E.text().size();
    for (NodeId N : Reds) {
      const Node &Nd = G.node(N);
      if (const RowPair *RP = pairOf(N)) {
        E.line(fmt::format("{} accp{} = {};", pairType(RP->Welford, Nd.Type), N,
                           pairIdentity(RP->Welford, Nd.Type)));
        continue;
      }
      if (pairSecond(N))
        continue; // accumulated with the pair's First (accp)
      E.line(fmt::format("{} acc{} = {};", computeType(Nd.Type), N,
                         reduceIdentity(Nd.Kind, Nd.Type)));
    }
    E.open("if (rowOk)");
    std::set<NodeId> StoredNow;
    rowLoop([&] {
      lanes(true, [&](int K) {
        for (NodeId N : Reds) {
          const Node &Nd = G.node(N);
          if (pairSecond(N))
            continue;
          const Node &Op = G.node(Nd.Operands[0]);
          std::string V = promoteValue(
              Op.Type, Nd.Type,
              E.value(Nd.Operands[0], E.domainCoords()));
          if (const RowPair *RP = pairOf(N)) {
            std::string Add = fmt::format(
                "{}(accp{}, {});", RP->Welford ? "jf_welford_add" : "jf_online_add", N, V);
            E.line(E.chunk() == ChunkKind::Partial
                       ? fmt::format("if ({}) {}", E.laneValid(), Add)
                       : Add);
            continue;
          }
          accumulate("acc" + std::to_string(N), Nd.Kind, V);
        }
        // The first loop that computes a kept value stores it for the
        // later ones.
        if (ScalarPart)
          return;
        for (NodeId N : KeepPending)
          if (E.emitted(N, E.domainCoords())) {
            E.line(fmt::format("kv{}[j].V[{}] = {};", N, K, E.value(N, E.domainCoords())));
            StoredNow.insert(N);
          }
      });
      // The first loop stores the outputs the later loops read back.
      if (S == 0 && !P.RowReadBack.empty()) {
        StoreOnly = readBackMask(true);
        storeChunk("rowc * R + col");
        StoreOnly.clear();
      }
    });
    E.close();
    secondRowFrom(StageMark);
    if (S == 0)
      for (unsigned O : P.RowReadBack)
        E.readBack(P.Outputs[O]);
    for (NodeId N : StoredNow) {
      E.keepValue(N, "kv" + std::to_string(N));
      KeepPending.erase(std::find(KeepPending.begin(), KeepPending.end(), N));
    }
    rowStageResults(Reds);
  }
}

/// The identifiers of address expression \p Addr, in order (numbers and
/// their suffixes left out).
static llvm::SmallVector<llvm::StringRef, 8> addressWords(llvm::StringRef Addr) {
  auto IsWordChar = [](char C) { return std::isalnum(static_cast<unsigned char>(C)) || C == '_'; };
  llvm::SmallVector<llvm::StringRef, 8> Words;
  while (!Addr.empty()) {
    if (!IsWordChar(Addr.front())) {
      Addr = Addr.drop_front();
      continue;
    }
    size_t N = 1;
    while (N < Addr.size() && IsWordChar(Addr[N]))
      ++N;
    if (!std::isdigit(static_cast<unsigned char>(Addr.front())))
      Words.push_back(Addr.take_front(N));
    Addr = Addr.drop_front(N);
  }
  return Words;
}

/// Whether \p Word is \p Prefix followed by a number (in_3, c0).
static bool numbered(llvm::StringRef Word, llvm::StringRef Prefix) {
  unsigned N;
  return Word.startswith(Prefix) && !Word.drop_front(Prefix.size()).getAsInteger(10, N);
}

/// Whether \p Addr (an input's offset before `+ col`) names the row: rowc
/// or an outer coordinate cN.
static bool rowDependentAddress(llvm::StringRef Addr) {
  return llvm::any_of(addressWords(Addr), [](llvm::StringRef W) {
    return W == "rowc" || W == "row" || numbered(W, "c");
  });
}

std::string KernelWriter::rowScratch(NodeId N) const {
  return P.RowsPerBlock > 1 ? fmt::format("jf_smem{}[threadIdx.y]", N)
                            : fmt::format("jf_smem{}", N);
}

void KernelWriter::rowBody() {
  std::string IT = E.indexType();
  std::map<NodeId, int> Stages = reductionStages(G, P.Nodes, P.RowPairs);
  if (P.ThreadsX > 32)
    rowSegment([&] {
      for (auto &[N, S] : Stages) {
        if (pairSecond(N))
          continue;
        std::string T = computeType(G.node(N).Type);
        if (const RowPair *RP = pairOf(N))
          T = pairType(RP->Welford, G.node(N).Type);
        // Several rows a block (a mixed kernel's): a scratch a row.
        std::string Rows =
            P.RowsPerBlock > 1 ? fmt::format("[{}]", P.RowsPerBlock) : std::string();
        E.line(fmt::format("__shared__ {} jf_smem{}{}[{}];", T, N, Rows, P.ThreadsX / 32 + 1));
      }
    });
  if (P.ClusterX > 1)
    for (auto &[N, S] : Stages) {
      if (pairSecond(N))
        continue; // in its First's slot
      const RowPair *RP = pairOf(N);
      E.line(fmt::format("__shared__ {} jf_cl{};",
                         RP ? pairType(RP->Welford, G.node(N).Type)
                            : computeType(G.node(N).Type),
                         N));
    }
  E.line("const int tx = threadIdx.x;");
  if (P.ThreadsAtLaunch)
    E.line("const int jf_nt = blockDim.x; // threads a row, the launch's (ThreadsAtLaunch)");
  const bool Mix = !P.MixColumns.empty();
  if (Mix)
    mixBegin();
  // RowPhaseLoop: the block's rows are gridDim.x apart, a multiple of Vec
  // (codegen::launch::rowLoopGrid) or more than the rows, so they share
  // the first row's phase, and the row vectors' chunks are loaded once.
  const bool Loop = Peel && P.RowPhaseLoop;
  JITFUSE_CHECK(!Loop || (P.ClusterX == 1 && P.RowsPerBlock == 1 && P.CacheRow &&
                          !P.AlignedRowCopy && P.RowSharedElemBytes == 0 &&
                          !P.Domain.back().isDynamic()),
                "RowPhaseLoop on a row kernel it does not apply to");
  if (P.ClusterX > 1) {
    E.line(fmt::format("const {0} row = ({0})(blockIdx.x / {1});", IT, P.ClusterX));
    E.line("const unsigned jf_rank = jf_cluster_rank();");
  } else if (Loop) {
    E.line(fmt::format("const {0} jf_row0 = ({0})blockIdx.x;", IT));
  } else if (Mix) {
    E.line(fmt::format("const {} row = jf_mr{};", IT, mixSubRows() ? " + threadIdx.y" : ""));
    if (twoRows())
      E.line(fmt::format("const {} row_1 = jf_mr + 1;", IT));
  } else {
    E.line(fmt::format("const {0} row = ({0})blockIdx.x * {1} + threadIdx.y;", IT,
                       P.RowsPerBlock));
  }
  // Two rows an iteration: what follows, to the stages, is the first row's
  // (its copy for the second row after it); the group's rows end at jf_r1.
  if (twoRows())
    E.line(fmt::format("[[maybe_unused]] const {} R = {};", IT, E.dimExpr(P.Domain.back())));
  // Chunks at the row start (rowStartChunks): the same for every row, so
  // declared once, before a second row's copy of the row's code.
  auto RowStartPhase = [&] {
    E.line("constexpr int jf_h = 0;");
    E.line(fmt::format("[[maybe_unused]] const {} jf_nw = R / {};", IT, Vec));
    E.line(fmt::format("[[maybe_unused]] const int jf_ns = (int)(R - jf_nw * {});", Vec));
  };
  if (twoRows() && rowStartChunks())
    RowStartPhase();
  const size_t RowMark = E.text().size();
  if (twoRows()) {
    E.line("const bool rowOk = row < jf_r1;");
    E.line(fmt::format("const {} rowc = rowOk ? row : jf_mr;", IT));
  } else if (!Loop && P.RowOkKnown) {
    // The grid is the rows (x ClusterX), or a mixed kernel's group's rows
    // (jf_mr < jf_r1 <= nrows): known to the compiler, the stages'
    // `if (rowOk)` go, and with them the loads and conversions each stage
    // repeated.
    JITFUSE_CHECK(P.RowsPerBlock == 1, "a known row is a block's only row");
    E.line("constexpr bool rowOk = true;");
    E.line(fmt::format("const {} rowc = row;", IT));
  } else if (!Loop && mixSubRows()) {
    // The group's rows end at jf_r1; a row past them adds no terms.
    E.line("const bool rowOk = row < jf_r1;");
    E.line(fmt::format("const {} rowc = rowOk ? row : jf_mr;", IT));
  } else if (!Loop) {
    E.line(fmt::format("const bool rowOk = row < ({})({});", IT, rowsExpr()));
    E.line(fmt::format("const {} rowc = rowOk ? row : 0;", IT));
  }
  if (!twoRows())
    E.line(fmt::format("[[maybe_unused]] const {} R = {};", IT, E.dimExpr(P.Domain.back())));
  // The row's whole chunks start jf_h elements in, where the lead is
  // aligned; the jf_ns elements before and after them go one per thread.
  // \p Fresh (RowPhaseLoop, in the loop): the phase is taken as new each
  // row, so the compiler does not hoist what follows from it out of the
  // loop (where R % Vec == 0 it can prove the phase invariant: LayerNorm
  // bf16 x 4096 took 151 registers, against 70 a block a row).
  // Before a RowPhaseLoop only the row vectors' loads read them.
  auto RowPhase = [&](llvm::StringRef Row, bool Fresh) {
    std::string O = fmt::format("(int)((jf_off + {} * R) % {})", Row, Vec);
    std::string MU = Loop && !Fresh ? "[[maybe_unused]] " : "";
    E.line(fmt::format("const int jf_o = {};", Fresh ? "jf_fresh(" + O + ")" : O));
    E.line(fmt::format("const int jf_h0 = ({0} - jf_o) % {0};", Vec));
    E.line("const int jf_h = jf_h0 < R ? jf_h0 : (int)R;");
    E.line(fmt::format("{}const {} jf_nw = (R - jf_h) / {};", MU, IT, Vec));
    E.line(fmt::format("{}const int jf_ns = (int)(R - jf_nw * {});", MU, Vec));
  };
  if (rowStartChunks()) {
    JITFUSE_CHECK(!Loop && !P.AlignedRowCopy && E.leadInput() < 0,
                  "row-start chunks have no lead tensor");
    if (!twoRows())
      RowStartPhase();
  } else if (Peel) {
    leadPhase();
    RowPhase(Loop ? "jf_row0" : "rowc", false);
  }
  if (!Loop)
    outerCoords("rowc");
  if (Peel && P.AlignedRowCopy)
    alignedRowFlag(Stages);

  // Keep the row's loads in registers between stages when they fit: a dry
  // run of the stages finds which loads there are.
  std::map<std::string, std::string> CacheVars;
  bool SharedRow = P.RowSharedElemBytes > 0; // static rows only (the schedule)
  if ((P.CacheRow || SharedRow) && !P.Domain.back().isDynamic()) {
    KernelWriter Dry(G, P, Vec, Peel);
    Dry.E.setLeadInput(E.leadInput());
    Dry.KeepPending = P.CachedValues;
    Dry.rowStages(Stages);
    Dry.rowLoop([&] { Dry.lanes(true, [&](int) { Dry.epilogueValues(); }); });
    int64_t Iters = staticRowIters();
    // In shared memory: the first load of each of the plan's stage inputs,
    // one part of Iters x ThreadsX chunks each (what the launch allots);
    // other loads of them (another offset in the row) are read again.
    struct KeptLoad {
      RowLoad L;
      std::string Decl; // the register array (empty: a shared-memory part)
      bool Once;        // RowPhaseLoop: a row vector, loaded before the row loop
    };
    std::vector<KeptLoad> Kept;
    std::set<unsigned> Parted;
    int64_t SharedOff = 0;
    if (SharedRow)
      E.line("extern __shared__ __align__(16) unsigned char jf_dyn[];");
    for (const RowLoad &L : Dry.E.seenRowLoads()) {
      std::string Var = "cv" + std::to_string(CacheVars.size());
      std::string Decl;
      std::string ST = storageType(G.node(P.Inputs[L.InputIdx]).Type);
      if (SharedRow) {
        if (!llvm::is_contained(P.RowSharedInputs, L.InputIdx) ||
            !Parted.insert(L.InputIdx).second)
          continue;
        E.line(fmt::format("const jf_shared_row<jf_vec<{0}, {1}>, {2}> {3}{{reinterpret_cast<"
                           "jf_vec<{0}, {1}> *>(jf_dyn + {4}) + tx}};",
                           ST, Vec, P.ThreadsX, Var, SharedOff));
        SharedOff += rowSharedBytes(P.Domain.back().Size, P.ThreadsX, Vec,
                                    dtypeBytes(G.node(P.Inputs[L.InputIdx]).Type));
      } else {
        // RowCacheInputs: an epilogue-only input is loaded where it is used;
        // RowCacheValuesOnly: every input is (the values are kept instead).
        if (P.RowCacheValuesOnly ||
            (!P.RowCacheInputs.empty() && (Peel || !P.LatePeeledOnly) &&
             !llvm::is_contained(P.RowCacheInputs, L.InputIdx)))
          continue;
        Decl = fmt::format("jf_vec<{}, {}> {}[{}];", ST, Vec, Var, Iters);
      }
      CacheVars[L.Key] = Var;
      Kept.push_back({L, std::move(Decl), Loop && !rowDependentAddress(L.Address)});
    }
    JITFUSE_CHECK(SharedOff <= LaunchRule(P).rowSharedBytes(Vec),
                  "row kernel: shared row parts exceed the launch's dynamic shared memory");
    auto DeclareKept = [&](bool Once) {
      for (const KeptLoad &K : Kept)
        if (K.Once == Once && !K.Decl.empty())
          E.line(K.Decl);
    };
    auto LoadKept = [&](bool Once) {
      if (llvm::none_of(Kept, [&](const KeptLoad &K) { return K.Once == Once; }))
        return;
      rowLoop([&] {
        for (const KeptLoad &K : Kept) {
          if (K.Once != Once)
            continue;
          const RowLoad &L = K.L;
          std::string ST = storageType(G.node(P.Inputs[L.InputIdx]).Type);
          std::string Addr = fmt::format("in_{}{} + col", L.InputIdx,
                                         L.Address.empty() ? "" : " + " + L.Address);
          std::string Fn = "jf_load";
          if (Peel && !(E.chunk() == ChunkKind::Whole && (L.Lead || E.alignedWide(ST, Addr))))
            Fn += std::string("_") + chunkSuffix(E.chunk());
          bool Lanes = Peel && E.chunk() != ChunkKind::Whole;
          // Read once into registers: the emitter's hint (StreamLoads),
          // none for an input broadcast over the rows.
          int H = E.l2HintFor(G.node(P.Inputs[L.InputIdx]).Dims);
          E.line(fmt::format("{}[j] = {}<{}, {}{}>({}{});", CacheVars[L.Key], Fn, ST, Vec,
                             H ? fmt::format(", {}", H) : "", Addr,
                             Lanes ? ", jf_lo, jf_hi" : ""));
        }
      }, /*OwnChunks=*/true);
    };
    if (Loop) {
      // The row vectors' chunks, at the phase every row of the block has.
      DeclareKept(true);
      LoadKept(true);
      E.open(fmt::format("for ({0} row = jf_row0; row < ({0})({1}); row += gridDim.x)", IT,
                         rowsExpr()));
      E.line("constexpr bool rowOk = true;");
      E.line(fmt::format("const {} rowc = row;", IT));
      RowPhase("rowc", true);
      // The row vectors too: held as loaded, not widened once for the
      // whole loop (which doubles their registers).
      std::string Fresh;
      for (const KeptLoad &K : Kept)
        if (K.Once)
          Fresh += fmt::format(" jf_fresh_vec({}[j]);", CacheVars[K.L.Key]);
      if (!Fresh.empty()) {
        E.line("#pragma unroll");
        E.line(fmt::format("for (int j = 0; j < {}; ++j) {{{} }}", Iters, Fresh));
      }
      outerCoords("rowc");
    }
    DeclareKept(false);
    if (!CacheVars.empty()) {
      E.open("if (rowOk)");
      LoadKept(false);
      E.close();
      E.setRowCache(&CacheVars);
    }
    // A peeled row's head and tail elements (one a thread when there are
    // enough threads) are loaded with the chunks too: read in each stage,
    // they put a memory round trip before every block-wide reduction (f32
    // rows of 4096 at +4 B ran 1.2x the aligned time).
    if (Peel && P.ThreadsX >= 2 * (Vec - 1) && !Dry.E.seenScalarLoads().empty()) {
      for (const Emitter::ScalarLoad &L : Dry.E.seenScalarLoads()) {
        std::string Var = "cs" + std::to_string(ScalarCache.size());
        E.line(fmt::format("{} {} = 0;", storageType(L.Type), Var));
        ScalarCache[L.Elem] = Var;
      }
      E.open("if (rowOk && " + rankZero("tx < jf_ns") + ")");
      E.line(fmt::format("[[maybe_unused]] const {0} col = tx < jf_h ? ({0})tx : tx + jf_nw * {1};", IT, Vec));
      for (const Emitter::ScalarLoad &L : Dry.E.seenScalarLoads())
        E.line(fmt::format("{} = {};", ScalarCache[L.Elem], L.Elem));
      E.close();
    }
    for (NodeId N : P.CachedValues)
      E.line(fmt::format("jf_vec<{}, {}> kv{}[{}];", computeType(G.node(N).Type), Vec, N, Iters));
    KeepPending = P.CachedValues;
  }
  // A row re-read per stage: the stages keep their loads in L2 for the
  // next loop, the last loop reads them for the last time.
  secondRowFrom(RowMark);
  if (P.RowL2Hints)
    E.setL2Hint(1);
  rowStages(Stages);
  if (P.RowL2Hints)
    E.setL2Hint(2);
  const size_t StoreMark = E.text().size();
  E.open("if (rowOk)");
  if (!P.RowReadBack.empty())
    StoreOnly = readBackMask(false);
  // Column partials of a row kept in registers: their own loop after the
  // stores, from the kept chunks taken as new (jf_fresh_vec), so the
  // store loop's values are not held for them (W21's aligned variant: 55
  // registers in one loop, 62 in two without the barrier, 40 with it).
  // A re-read row adds them where it loads the chunks for its stores.
  // (Two rows an iteration: each row's adds in its own copy of this code,
  // the second row's after the first's. One loop after both rows' stores,
  // both rows' terms in one read-modify-write, issued more: W21 538 -> 571
  // instructions for two rows, static.)
  const bool SplitAdds = Mix && !CacheVars.empty();
  rowLoop([&] {
    storeChunk("rowc * R + col");
    if (Mix && !SplitAdds)
      mixAdds();
  });
  if (SplitAdds) {
    std::string Fresh;
    for (const auto &[Key, Var] : CacheVars)
      Fresh += fmt::format(" jf_fresh_vec({}[j]);", Var);
    E.line("#pragma unroll");
    E.line(fmt::format("for (int j = 0; j < {}; ++j) {{{} }}", staticRowIters(), Fresh));
    rowLoop([&] { mixAdds(); });
  }
  StoreOnly.clear();
  E.setL2Hint(P.StreamLoads ? 2 : 0);
  // Per-row outputs ([outer..., 1]) are written once per row.
  Coords PerRow = E.domainCoords();
  PerRow.ColRel = false;
  PerRow.Last = "0";
  bool Any = false;
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    const Node &Nd = G.node(P.Outputs[O]);
    if (sameNumel(Nd.Dims, P.Domain) || llvm::is_contained(P.MixColumns, P.Outputs[O]) ||
        emptyShape(Nd.Dims))
      continue; // stored by the row loop, column partials' results, or empty
    if (!Any)
      E.open("if (" + rankZero("tx == 0") + ")");
    Any = true;
    std::string V = E.value(P.Outputs[O], PerRow);
    // A strided per-row output: its element of row rowc at its strides.
    std::string Addr = "rowc";
    if (!G.stridesOf(P.Outputs[O]).empty())
      Addr = E.address(P.Outputs[O],
                       Nd.rank() == P.Domain.size() ? PerRow : E.coordsOfIndex("rowc", Nd.Dims),
                       Nd.Dims);
    E.line(fmt::format("out_{}[{}] = {};", O, Addr, storeConvert(Nd.Type, V)));
  }
  if (Any)
    E.close();
  E.close();
  secondRowFrom(StoreMark);
  if (Loop || Mix) {
    // A peeled row's chunks move with its phase, so the next row's column
    // terms go to slots another thread added this row's to: a barrier. In
    // the aligned variant each thread adds to the same columns every row,
    // and the block reductions' scratch needs none either: a thread writes
    // a stage's scratch again only in the next row, and every thread has
    // read the stage's result before that row's first barrier, which the
    // next combine waits behind (jf_block_partial, jf_block_combine).
    if (Loop || Peel)
      E.line("__syncthreads();");
    E.close();
  }
  if (Mix)
    mixEnd();
  // No block of the cluster leaves while another may still read its
  // shared memory.
  if (P.ClusterX > 1)
    E.line("jf_cluster_sync();");
}

/// Whether \p Addr names only what a row kernel defines before its loops:
/// parameters (in_N, out_N, d_N), the row (rowc, R, cN outer coordinates)
/// and `col`, which jf_al binds to the row's first whole chunk.
static bool rowInvariantAddress(llvm::StringRef Addr) {
  return llvm::all_of(addressWords(Addr), [](llvm::StringRef W) {
    return numbered(W, "in_") || numbered(W, "out_") || numbered(W, "d_") ||
           numbered(W, "c") || W == "rowc" || W == "R" || W == "col" || W == "long" ||
           W == "int";
  });
}

void KernelWriter::alignedRowFlag(const std::map<NodeId, int> &Stages) {
  // A dry run of the stages and the epilogue, without register caches:
  // every whole-chunk access the real loops can make (a cached row's loads
  // are among them).
  KernelWriter Dry(G, P, Vec, Peel);
  Dry.E.setLeadInput(E.leadInput());
  std::vector<AlignedAccess> Found;
  Dry.E.setAlignedCopy(nullptr, &Found);
  Dry.rowStages(Stages);
  if (!P.RowReadBack.empty())
    Dry.StoreOnly = Dry.readBackMask(false);
  Dry.rowLoop([&] { Dry.storeChunk("rowc * R + col"); });
  std::vector<AlignedAccess> Checks;
  for (AlignedAccess &A : Found)
    if (AlignedAddrs.insert(A.Addr).second)
      Checks.push_back(std::move(A));
  // jf_al evaluates the addresses before the loops: each may name only the
  // kernel's parameters and the row's variables, never a value of the loop.
  for (const AlignedAccess &A : Checks)
    if (!rowInvariantAddress(A.Addr)) {
      AlignedAddrs.clear();
      return;
    }
  if (Checks.empty())
    return; // every chunked access is the lead's: one copy serves
  // A chunked tensor's chunks of a row are 16-byte (or 32-byte) steps apart,
  // so its first whole chunk's alignment is every chunk's. The warp takes
  // the plain copy only when all its rows do, so no warp runs both.
  E.line("// Every chunked tensor of this warp's rows at the lead's alignment: the");
  E.line("// chunk loops' plain wide copy (KernelPlan::AlignedRowCopy).");
  E.open("const bool jf_al = __all_sync(__activemask(), [&]");
  E.line(fmt::format("[[maybe_unused]] const {} col = jf_h;", E.indexType()));
  std::string All;
  for (const AlignedAccess &A : Checks)
    All += fmt::format("{}jf_chunk_wide<{}, {}>({}, 0, {})", All.empty() ? "" : " &&\n    ",
                       A.Type, Vec, A.Addr, Vec);
  E.line("return " + All + ";");
  E.close("());");
  AlignedCopy = true;
}

void KernelWriter::epilogueValues() {
  for (NodeId N : P.Outputs)
    if (domainOutput(N))
      E.value(N, E.domainCoordsOf(N));
  // Column partials read their operands in the last loop too.
  for (NodeId N : P.MixColumns) {
    NodeId A = G.node(N).Operands[0];
    E.value(A, E.domainCoordsOf(A));
  }
}

} // namespace jitfuse::codegen
