//===- bench/jitfuse_sweep.cpp - the shape sweep of issue 12 item 6 -------===//
//
// Times jitfuse on a deterministic sample of the grid
//   pattern x row length H x rows x pointer offset x dtype
// (patterns: add_rmsnorm, layernorm, softmax, silu_mul, rope, bias_gelu,
// sum_abs_amax) and writes one JSON object per point (JSON lines). The same
// point list, printed by --list, drives bench/sweep_torch.py, so both sides
// time the same shapes; bench/sweep_report.py joins them. Every input and
// output pointer is offset by the point's byte offset (each buffer is
// allocated 16 bytes larger; --offset-first-only: the first input only). Like triton.testing.do_bench, a 256 MB buffer
// is cleared before every timed run (cuMemsetD8Async; --flush-kernel: a
// kernel), so no run finds its data in L2.
// Without a CUDA driver it compiles the selected points' graphs and exits 0.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "SweepSchedule.h"
#include "Workloads.h"

#include "driver/Compiler.h"
#include "examples/ExampleGraphs.h"
#include "ir/NN.h"
#include "reference/Interpreter.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>

using namespace jitfuse;
using namespace jitfuse::bench;
using Json = nlohmann::ordered_json;

namespace {

const std::vector<std::string> kPatterns = {"add_rmsnorm", "layernorm", "softmax", "silu_mul",
                                            "rope",        "bias_gelu", "sum_abs_amax"};
/// Patterns outside issue 12's grid, swept only when --only names them (so
/// the default sweep's torch.compile budget stays on the grid): col_sum, a
/// bias gradient (a column reduction of [rows, H]; its split rule is
/// launch::ColumnSplitWork's); layernorm_bwd and rmsnorm_bwd, a norm's
/// backward from its saved f32 [rows, 1] statistics (dx, and the f32 column
/// sums dw and db: W21's graph; CompileOptions::MixOrderColumns).
const std::vector<std::string> kExtraPatterns = {"col_sum", "layernorm_bwd", "rmsnorm_bwd"};
// Primes near 1k and 5k, model widths (BERT, LLaMA MLP, Mistral MLP, Phi-3
// and LLaMA-3 vocabularies) and odd ones (GPT-2's vocabulary, 4096 - 1).
const std::vector<int64_t> kRowLengths = {1021, 4999,  768,    2048, 4096,  6144,
                                          11008, 14336, 32064, 128256, 4095, 50257};
const std::vector<int64_t> kOffsets = {0, 2, 4};
const std::vector<DType> kDTypes = {DType::F32, DType::BF16, DType::F16};
constexpr int64_t kBigRows = 16384;
/// Largest row-shaped tensor of a point: keeps the biggest points (4 such
/// tensors) at about 1 GB of traffic and their setup short.
constexpr int64_t kMaxTensorBytes = int64_t(256) << 20;
constexpr int64_t kFlushBytes = int64_t(256) << 20;

struct Options {
  bool List = false;
  std::string JsonlPath;
  int Sms = 0;
  int Iters = 10;
  int Warmup = 3;
  uint64_t Seed = 20261130;
  int RandomPoints = 80;
  std::vector<std::string> Only;
  int MaxPoints = 0;
  /// Keep only rows of at least this many elements (0: all).
  int64_t MinRow = 0, MaxRow = 0;
  /// Keep only points that run the peeled variant (an offset, or a row the
  /// 16-byte vector does not divide).
  bool PeeledOnly = false;
  /// Keep only these point ids (a profile of a sweep's worst points).
  std::vector<std::string> Ids;
  double BudgetS = 220;
  bool CompileOnly = false;
  std::string Shard;
  std::string PatternOf;
  std::optional<DType> PatternType; // PatternOf, parsed
  bool OffsetFirstOnly = false;
  /// Clear L2 with a kernel (jitfuse's own, y = x * 0.5 over the flush
  /// buffer's halves) instead of cuMemsetD8Async: the run before a timed
  /// kernel is then a kernel, as do_bench's cache.zero_() is for PyTorch's
  /// side. Small points ran about 5.5 us here against Triton's 4.1-4.8
  /// (H100, session 41): whether the memset's hand-over is part of that.
  bool FlushKernel = false;
  /// The row length is a dynamic dim ("H") too, bound at run time: one
  /// compile a pattern and dtype serves every row length, as a model's
  /// graph over a run-time sequence or spatial size does (W17's HW).
  bool DynamicRow = false;
  /// The schedule options under comparison (bench/SweepSchedule.h).
  ScheduleFlags Sched;
};

struct Point {
  std::string Pattern;
  int64_t H = 0;
  int64_t Rows = 0;
  int64_t Offset = 0;
  DType Type = DType::F32;
  /// Only the first input at Offset, every other tensor aligned
  /// (--offset-first-only; id suffix "f"), instead of every tensor.
  bool FirstOnly = false;

  std::string graphKey() const {
    return fmt::format("{}/{}/H{}", Pattern, dtypeName(Type), H);
  }
  /// --dynamic-row: every row length of a pattern and dtype is one graph.
  std::string dynamicGraphKey() const {
    return fmt::format("{}/{}/Hdyn", Pattern, dtypeName(Type));
  }
  std::string id() const {
    return fmt::format("{}/R{}/o{}{}", graphKey(), Rows, Offset, FirstOnly && Offset ? "f" : "");
  }
};

/// RoPE's row is heads x head dim, so H must split into heads of 128 (or 64).
int64_t ropeHeadDim(int64_t H) {
  if (H % 128 == 0)
    return 128;
  return H % 64 == 0 ? 64 : 0;
}

bool validPoint(const Point &P) {
  if (P.Pattern == "rope" && ropeHeadDim(P.H) == 0)
    return false;
  // A 4-byte element at a 2-byte offset is not addressable (nor expressible
  // as a torch view).
  return P.Offset % dtypeBytes(P.Type) == 0;
}

/// The point an id names (pattern/dtype/H<n>/R<n>/o<n>[f]), or none.
std::optional<Point> parsePointId(llvm::StringRef Id) {
  llvm::SmallVector<llvm::StringRef, 5> F;
  Id.split(F, '/');
  if (F.size() != 5 || !F[2].consume_front("H") || !F[3].consume_front("R") ||
      !F[4].consume_front("o"))
    return std::nullopt;
  Point P;
  P.Pattern = F[0].str();
  std::optional<DType> T = parseDType(F[1]);
  if (!T)
    return std::nullopt;
  P.Type = *T;
  P.FirstOnly = F[4].consume_back("f");
  if (F[2].getAsInteger(10, P.H) || F[3].getAsInteger(10, P.Rows) ||
      F[4].getAsInteger(10, P.Offset) || P.H <= 0 || P.Rows <= 0 || P.Offset < 0)
    return std::nullopt;
  return P;
}

/// Rows capped so one row-shaped tensor stays within kMaxTensorBytes.
int64_t cappedRows(int64_t Rows, int64_t H, DType T) {
  return std::max<int64_t>(1, std::min(Rows, kMaxTensorBytes / (H * dtypeBytes(T))));
}

/// The sample: (a) every pattern x H x dtype at 16384 rows, aligned; (b) the
/// same at 16384 rows misaligned, 2 bytes for bf16 and 4 bytes for f32;
/// (c) a few H (aligned, prime, long) at 1, 8, 128 and #SMs rows, bf16;
/// (d) RandomPoints more drawn from the whole grid with Seed. Deduplicated,
/// in that order.
std::vector<Point> makePoints(const Options &O, int Sms) {
  std::vector<Point> Pts;
  std::set<std::string> Seen;
  std::vector<std::string> Patterns = kPatterns;
  // An opt-in pattern joins when --only names it or an --ids point is one
  // of its own (profiling one point needs no second flag).
  for (const std::string &P : kExtraPatterns)
    if (llvm::is_contained(O.Only, P) || llvm::any_of(O.Ids, [&](const std::string &Id) {
          return Id.starts_with(P + "/");
        }))
      Patterns.push_back(P);
  auto Add = [&](Point P) {
    P.Rows = cappedRows(P.Rows, P.H, P.Type);
    P.FirstOnly = O.OffsetFirstOnly;
    if (!validPoint(P) || !Seen.insert(P.id()).second)
      return;
    Pts.push_back(std::move(P));
  };
  for (const std::string &Pat : Patterns)
    for (int64_t H : kRowLengths)
      for (DType T : kDTypes)
        Add({Pat, H, kBigRows, 0, T});
  for (const std::string &Pat : Patterns)
    for (int64_t H : kRowLengths) {
      Add({Pat, H, kBigRows, 2, DType::BF16});
      Add({Pat, H, kBigRows, 4, DType::F32});
    }
  for (const std::string &Pat : Patterns)
    for (int64_t H : {int64_t(4096), int64_t(4999), int64_t(32064), int64_t(128256)})
      for (int64_t Rows : {int64_t(1), int64_t(8), int64_t(128), int64_t(Sms)})
        Add({Pat, H, Rows, 0, DType::BF16});
  const std::vector<int64_t> AllRows = {1, 8, 128, Sms, kBigRows};
  std::mt19937_64 Rng(O.Seed);
  auto Pick = [&](size_t N) { return static_cast<size_t>(Rng() % N); };
  for (int Tries = 0, Added = 0; Added < O.RandomPoints && Tries < 100 * O.RandomPoints;
       ++Tries) {
    size_t Before = Pts.size();
    Add({Patterns[Pick(Patterns.size())], kRowLengths[Pick(kRowLengths.size())],
         AllRows[Pick(AllRows.size())], kOffsets[Pick(kOffsets.size())],
         kDTypes[Pick(kDTypes.size())]});
    Added += Pts.size() > Before;
  }
  // An --ids point off the grid (another row length, row count or offset):
  // timed as named, rows not capped, so a rule can be checked on shapes
  // the sweep was not built from.
  for (const std::string &Id : O.Ids) {
    std::optional<Point> P = parsePointId(Id);
    if (P && llvm::is_contained(Patterns, P->Pattern) && validPoint(*P) &&
        Seen.insert(P->id()).second)
      Pts.push_back(*P);
  }
  if (!O.Only.empty())
    llvm::erase_if(Pts, [&](const Point &P) {
      return std::find(O.Only.begin(), O.Only.end(), P.Pattern) == O.Only.end();
    });
  if (O.MinRow > 0)
    llvm::erase_if(Pts, [&](const Point &P) { return P.H < O.MinRow; });
  if (O.MaxRow > 0)
    llvm::erase_if(Pts, [&](const Point &P) { return P.H > O.MaxRow; });
  if (O.PeeledOnly)
    llvm::erase_if(Pts, [&](const Point &P) {
      return P.Offset == 0 && P.H % (16 / dtypeBytes(P.Type)) == 0;
    });
  if (!O.Ids.empty())
    llvm::erase_if(Pts, [&](const Point &P) {
      return std::find(O.Ids.begin(), O.Ids.end(), P.id()) == O.Ids.end();
    });
  if (O.MaxPoints > 0 && static_cast<int64_t>(Pts.size()) > O.MaxPoints)
    Pts.resize(O.MaxPoints);
  return Pts;
}

/// The graph of a pattern; rows are the dynamic dim "B", and the row H is a
/// number or the dynamic dim "H" (--dynamic-row). Each is what a model
/// computes at that point (the torch side writes the same functions).
void buildPattern(Graph &G, const std::string &Pat, DType T, const Dim &H) {
  if (Pat == "add_rmsnorm")
    return buildAddRmsNorm(G, T, H);
  if (Pat == "layernorm") {
    Value X = G.input("x", T, {"B", H});
    Value W = G.input("weight", T, {H});
    Value Bias = G.input("bias", T, {H});
    return G.output("y", nn::layerNorm(X, W, Bias, G.scalar("eps", DType::F32)));
  }
  if (Pat == "softmax")
    return G.output("p", nn::softmax(G.input("x", T, {"B", H})));
  if (Pat == "silu_mul") {
    Value Gate = G.input("gate", T, {"B", H});
    Value Up = G.input("up", T, {"B", H});
    return G.output("out", nn::siluMul(Gate, Up));
  }
  if (Pat == "rope") {
    if (H.isDynamic())
      fail("jitfuse_sweep: --dynamic-row: rope's row is heads x head dim, split when built");
    int64_t D = ropeHeadDim(H.Size);
    Value Q = G.input("q", T, {"B", H.Size / D, D});
    Value Cos = G.input("cos", T, {"B", D / 2});
    Value Sin = G.input("sin", T, {"B", D / 2});
    return G.output("q_rot", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
  }
  if (Pat == "bias_gelu") {
    Value X = G.input("x", T, {"B", H});
    Value Bias = G.input("bias", T, {H});
    return G.output("out", nn::geluBias(X, Bias, /*TanhApprox=*/true));
  }
  if (Pat == "sum_abs_amax") {
    Value A = abs(G.input("x", T, {"B", H}));
    G.output("sum_abs", sum(A));
    return G.output("amax", reduceMax(A));
  }
  if (Pat == "col_sum") // accumulated in f32, stored in T (x.sum(0))
    return G.output("db", sum(G.input("x", T, {"B", H}), llvm::ArrayRef<int64_t>{0}));
  if (Pat == "layernorm_bwd" || Pat == "rmsnorm_bwd") {
    // From the saved f32 statistics (W21's graph over the sweep's shapes).
    examples::addNormBackward(G, T, H, Pat == "layernorm_bwd");
    return;
  }
  fail("jitfuse_sweep: unknown pattern '{}'", Pat);
}

Json pointJson(const Point &P) {
  Json J = Json::object();
  J["id"] = P.id();
  J["pattern"] = P.Pattern;
  J["H"] = P.H;
  J["rows"] = P.Rows;
  J["offset"] = P.Offset;
  if (P.FirstOnly && P.Offset)
    J["offset_first_only"] = true;
  J["dtype"] = dtypeName(P.Type).str();
  return J;
}

/// Whether a poisoned (0xFF) or NaN value is among the first and last
/// Elems elements of a device tensor: the inputs are in [-2, 2), so no
/// pattern has a NaN output.
bool hasNaN(CUdeviceptr Ptr, DType T, int64_t Numel) {
  int64_t E = dtypeBytes(T), Take = std::min<int64_t>(Numel, 1024);
  for (int64_t Start : {int64_t(0), Numel - Take}) {
    std::vector<uint8_t> Host(Take * E);
    rt::copyToHost(Host.data(), Ptr + Start * E, Host.size());
    for (int64_t I = 0; I < Take; ++I) {
      if (E == 4) {
        float F;
        std::memcpy(&F, Host.data() + 4 * I, 4);
        if (std::isnan(F))
          return true;
        continue;
      }
      uint16_t B;
      std::memcpy(&B, Host.data() + 2 * I, 2);
      bool NaN = T == DType::BF16 ? (B & 0x7F80) == 0x7F80 && (B & 0x7F)
                                  : (B & 0x7C00) == 0x7C00 && (B & 0x3FF);
      if (NaN)
        return true;
    }
  }
  return false;
}

struct Timer {
  rt::Stream *Stream = nullptr; // null without a GPU
  rt::DeviceBuffer Flush;
  /// Options::FlushKernel: the kernel that clears L2 (its input the first
  /// half of Flush, its output the second).
  std::optional<Executable> FlushRun;
  PatternFiller Filler;

  /// Clears L2 before run \p I.
  void flush(int I, CUstream S) {
    if (!FlushRun) {
      rt::memsetD8Async(Flush.ptr(), static_cast<unsigned char>(I), kFlushBytes, S);
      return;
    }
    FlushRun->run({Flush.ptr()}, {Flush.ptr() + kFlushBytes / 2}, {}, {}, S);
  }
};

/// The graph Options::FlushKernel runs: half the flush buffer read, half
/// written.
Graph flushGraph() {
  Graph G;
  Value X = G.input("flush", DType::F32, {Dim(kFlushBytes / 2 / 4)});
  G.output("flushed", X * 0.5);
  return G;
}

/// Microseconds of each of O.Iters runs of \p Run on the timer's stream
/// after O.Warmup untimed ones (timeEach), L2 flushed before every run.
std::vector<double> timeFlushed(Timer &Tm, const Options &O,
                                llvm::function_ref<void(CUstream)> Run) {
  CUstream S = Tm.Stream->get();
  return timeEach([&](int) { Run(S); }, O.Warmup, O.Iters, S,
                  [&](int I) { Tm.flush(I, S); });
}

/// The point's copy ceiling: the driver's device-to-device copy of half
/// \p Bytes (so \p Bytes cross HBM, read and written, as the point's
/// minimal traffic does), timed as the point is (L2 flushed, each run
/// between its own event pair). Small transfers do not reach the
/// bandwidth of large ones (ramp-up and tail of a launch); a point is
/// judged against the copy of its own size (J["copy_us"], "copy_gbs").
void timeCopy(Timer &Tm, const Options &O, int64_t Bytes, Json &J) {
  const size_t Half = static_cast<size_t>(Bytes / 2);
  if (Half == 0)
    return;
  rt::DeviceBuffer Src(Half), Dst(Half);
  rt::memsetD8(Src.ptr(), 0x3C, Half);
  double Med = median(timeFlushed(
      Tm, O, [&](CUstream S) { rt::copyDeviceAsync(Dst.ptr(), Src.ptr(), Half, S); }));
  J["copy_us"] = Med;
  J["copy_gbs"] = 2.0 * static_cast<double>(Half) / (Med * 1e3);
}

/// The dynamic dims' values at point P: its rows, and its row length with
/// --dynamic-row.
std::map<std::string, int64_t> runDims(const Options &O, const Point &P) {
  std::map<std::string, int64_t> Dims = {{"B", P.Rows}};
  if (O.DynamicRow)
    Dims["H"] = P.H;
  return Dims;
}

/// Times one point: fresh offset buffers, inputs filled, outputs poisoned,
/// L2 flushed before each of Warmup + Iters runs, each run between its own
/// event pair. Fills J with the median and bandwidth.
void timePoint(Timer &Tm, const Options &O, const Point &P, Executable &X, Json &J) {
  std::map<std::string, int64_t> Dims = runDims(O, P);
  std::map<std::string, double> Scalars = {{"eps", P.Pattern == "layernorm" ? 1e-5 : 1e-6}};
  RunArgs A = runArgsFor(X, Dims, Scalars);
  std::vector<rt::DeviceBuffer> Bufs;
  std::vector<CUdeviceptr> In, Out;
  uint64_t Salt = 1;
  for (const TensorDesc &T : X.inputs()) {
    int64_t N = numelOf(resolveShape(T.Dims, Dims));
    Bufs.emplace_back(N * dtypeBytes(T.Type) + 16);
    // A tensor of wider elements than the offset (the f32 statistics of a
    // bf16 norm backward at +2 B) stays aligned: it could not be addressed.
    bool Offset = !(P.FirstOnly && !In.empty()) && P.Offset % dtypeBytes(T.Type) == 0;
    In.push_back(Bufs.back().ptr() + (Offset ? P.Offset : 0));
    // --pattern-of: another dtype's random bytes (same element size), to
    // tell a kernel's cost from its data's.
    DType FillT = T.Type;
    if (O.PatternType && dtypeBytes(*O.PatternType) == dtypeBytes(FillT))
      FillT = *O.PatternType;
    Tm.Filler.fill(In.back(), FillT, N, Salt++);
  }
  for (const TensorDesc &T : X.outputs()) {
    int64_t N = numelOf(resolveShape(T.Dims, Dims));
    Bufs.emplace_back(N * dtypeBytes(T.Type) + 16);
    rt::memsetD8(Bufs.back().ptr(), 0xFF, Bufs.back().size());
    Out.push_back(Bufs.back().ptr() +
                  (P.FirstOnly || P.Offset % dtypeBytes(T.Type) != 0 ? 0 : P.Offset));
  }
  std::vector<double> Us =
      timeFlushed(Tm, O, [&](CUstream S) { X.run(In, Out, A.Scalars, A.Dims, S); });
  double Med = median(Us);
  J["us"] = Med;
  J["min_us"] = *std::min_element(Us.begin(), Us.end());
  J["gbs"] = A.MinBytes / (Med * 1e3);
  timeCopy(Tm, O, A.MinBytes, J);
  for (size_t K = 0; K < Out.size(); ++K) {
    const TensorDesc &T = X.outputs()[K];
    if (hasNaN(Out[K], T.Type, numelOf(resolveShape(T.Dims, Dims))))
      fail("output '{}' has NaN or unwritten (poisoned) elements", T.Name);
  }
}

Compiler makeCompiler() {
  try {
    return Compiler(rt::CacheConfig::fromEnv());
  } catch (const Error &E) {
    fmt::print(stderr, "jitfuse_sweep: {}; using the default cache\n", E.what());
    return Compiler(rt::CacheConfig{});
  }
}

/// "K/N" -> (K, N); "" -> (0, 1).
std::pair<size_t, size_t> parseShard(const std::string &S) {
  if (S.empty())
    return {0, 1};
  unsigned K = 0, N = 0;
  if (std::sscanf(S.c_str(), "%u/%u", &K, &N) != 2 || N == 0 || K >= N)
    fail("jitfuse_sweep: --shard '{}' is not K/N with K < N", S);
  return {K, N};
}

/// Each compiled variant's block size and ptxas report (deferred variants
/// once a run loaded them), for reading registers and occupancy per point.
Json variantsJson(const Executable &X) {
  Json Out = Json::array();
  for (const rt::KernelResources &R : X.kernelResources()) {
    int Threads = 0;
    for (const KernelInfo &K : X.kernels())
      if (llvm::StringRef(R.Name).startswith(K.Name))
        Threads = K.ThreadsX * K.RowsPerBlock;
    Out.push_back({{"name", R.Name},
                   {"threads", Threads},
                   {"registers", R.Registers},
                   {"stack_bytes", R.StackBytes},
                   {"spill_bytes", R.SpillStoreBytes + R.SpillLoadBytes}});
  }
  return Out;
}

int run(const Options &O) {
  rt::Driver &D = rt::Driver::get();
  int Sms = O.Sms;
  bool Gpu = D.available() && !O.CompileOnly;
  if (D.available()) {
    rt::primaryContext(0);
    if (Sms <= 0)
      Sms = rt::queryDevice(0).SmCount;
  }
  if (Sms <= 0)
    Sms = 132; // the H200's, when there is no device to ask
  std::vector<Point> Pts = makePoints(O, Sms);
  if (O.List) {
    fmt::print("[\n");
    for (size_t I = 0; I < Pts.size(); ++I)
      fmt::print("{}{}\n", pointJson(Pts[I]).dump(), I + 1 < Pts.size() ? "," : "");
    fmt::print("]\n");
    return 0;
  }
  auto [ShardK, ShardN] = parseShard(O.Shard);
  std::ofstream Jsonl;
  if (!O.JsonlPath.empty()) {
    Jsonl.open(O.JsonlPath);
    if (!Jsonl)
      fail("jitfuse_sweep: cannot write '{}'", O.JsonlPath);
  }
  if (!D.available())
    fmt::print("jitfuse_sweep: no CUDA driver ({}); GPU timing skipped, graphs are only "
               "compiled\n",
               D.unavailableReason());
  Timer Tm;
  std::optional<rt::Stream> Stream;
  if (Gpu) {
    rt::DeviceInfo Info = rt::queryDevice(0);
    fmt::print("Device: {} ({}, {} SMs), {} points\n", Info.Name, Info.archName(),
               Info.SmCount, Pts.size());
    Stream.emplace();
    Tm.Stream = &*Stream;
    Tm.Flush = rt::DeviceBuffer(kFlushBytes);
  }
  Compiler Jit = makeCompiler();
  if (O.FlushKernel) // compiled without a GPU too (the CPU test checks it builds)
    Tm.FlushRun = Jit.compile(flushGraph(), CompileOptions{});
  std::map<std::string, Executable> Compiled;
  std::map<std::string, size_t> GraphIndex;
  auto Start = std::chrono::steady_clock::now();
  int Errors = 0, Done = 0;
  for (const Point &P : Pts) {
    const std::string Key = O.DynamicRow ? P.dynamicGraphKey() : P.graphKey();
    size_t GI = GraphIndex.emplace(Key, GraphIndex.size()).first->second;
    if (GI % ShardN != ShardK)
      continue;
    Json J = pointJson(P);
    if (O.DynamicRow)
      J["dynamic_row"] = true;
    try {
      auto It = Compiled.find(Key);
      if (It == Compiled.end()) {
        auto T0 = std::chrono::steady_clock::now();
        Graph G;
        buildPattern(G, P.Pattern, P.Type, O.DynamicRow ? Dim("H") : Dim(P.H));
        CompileOptions CO = scheduleCompileOptions(O.Sched);
        // Compile-only runs report every variant's registers (no deferral).
        CO.DeferVariants = !O.CompileOnly;
        It = Compiled.emplace(Key, Jit.compile(G, CO)).first;
        J["compile_ms"] = msSince(T0);
      }
      Executable &X = It->second;
      std::map<std::string, int64_t> Dims = runDims(O, P);
      RunArgs A = runArgsFor(X, Dims, {{"eps", 0.0}});
      // The plan these rows run (CompileOptions::MixMinRows: few rows take
      // the one without the mixed kernel).
      const Executable &Runs = X.planAt(A.Dims);
      std::vector<int64_t> KB = Runs.kernelBytes(A.Dims);
      J["kernels"] = Runs.numKernels();
      // The program these rows run (every kernel and variant): two runs'
      // points with one key compile the same code (bench/plan_diff.py).
      J["cache_key"] = Runs.cacheKey();
      J["bytes"] = A.MinBytes;
      J["kernel_bytes"] = std::accumulate(KB.begin(), KB.end(), int64_t(0));
      if (O.CompileOnly) {
        J["status"] = "compiled only";
      } else if (!Gpu) {
        J["status"] = "compiled only (no GPU)";
      } else if (msSince(Start) > 1000 * O.BudgetS) {
        J["status"] = "skipped (time budget)";
      } else {
        timePoint(Tm, O, P, X, J);
        J["status"] = "ok";
      }
    } catch (const std::exception &E) {
      J["status"] = "error";
      J["error"] = std::string(E.what());
      ++Errors;
      fmt::print("jitfuse_sweep: {}: {}\n", P.id(), E.what());
    }
    if (auto It = Compiled.find(Key); It != Compiled.end())
      J["variants"] = variantsJson(It->second);
    if (Jsonl.is_open())
      Jsonl << J.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n" << std::flush;
    ++Done;
    if (J.contains("us"))
      fmt::print("{:<40} {:>10.1f} us {:>7.0f} GB/s  {} kernel(s)\n", P.id(),
                 J["us"].get<double>(), J["gbs"].get<double>(), J["kernels"].get<unsigned>());
    else if (Done % 25 == 0)
      fmt::print("{} points, {:.1f} s\n", Done, msSince(Start) / 1000);
    std::fflush(stdout);
  }
  fmt::print("jitfuse_sweep: {} points in {:.1f} s, {} error(s)\n", Done, msSince(Start) / 1000,
             Errors);
  return Errors ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  CLI::App App{"jitfuse shape sweep (issue 12 item 6): pattern x row length x rows x "
               "pointer offset x dtype, sampled; see BENCHMARKS.md"};
  App.add_flag("--list", O.List, "Print the points as a JSON array and exit");
  App.add_option("--jsonl", O.JsonlPath, "Write one JSON object per point to this file");
  App.add_option("--sms", O.Sms, "SM count for the #SMs rows (default: the device's, else 132)");
  App.add_option("--iters", O.Iters, "Timed runs per point")->check(CLI::Range(1, 100000));
  App.add_option("--warmup", O.Warmup, "Untimed runs first")->check(CLI::Range(0, 100000));
  App.add_option("--seed", O.Seed, "Seed of the random part of the sample");
  App.add_option("--pattern-of", O.PatternOf,
                 "Fill inputs with this dtype's random bytes where the element sizes match "
                 "(e.g. f16 tensors with bf16 values' bits: data-dependent timing)");
  App.add_option("--random-points", O.RandomPoints, "Randomly drawn points")
      ->check(CLI::Range(0, 100000));
  App.add_option("--only", O.Only, "Patterns to run")->delimiter(',');
  App.add_option("--max-points", O.MaxPoints, "Keep only the first N points (0: all)");
  App.add_option("--max-row", O.MaxRow,
                 "Keep only points whose row has at most this many elements (0: all)");
  App.add_option("--min-row", O.MinRow,
                 "Keep only points whose row has at least this many elements (0: all)");
  App.add_flag("--peeled-only", O.PeeledOnly,
               "Keep only points that run the peeled variant (a pointer offset, or a row "
               "the 16-byte vector does not divide)");
  App.add_option("--ids", O.Ids,
                 "Keep only these point ids, e.g. layernorm/f32/H32064/R2092/o0 (as --list "
                 "prints them; for profiling single points); an id off the grid is timed "
                 "as named (any H, rows and offset)")
      ->delimiter(',');
  App.add_option("--budget-s", O.BudgetS,
                 "Stop timing after this many seconds (later points: skipped)");
  App.add_flag("--compile-only", O.CompileOnly,
               "Only compile the graphs (warms the kernel cache; use with --shard)");
  App.add_flag("--offset-first-only", O.OffsetFirstOnly,
               "Only the first input of a point at its offset, the other tensors aligned (a "
               "slice's phase against aligned weights and outputs; ids end in 'f'; "
               "sweep_torch.py follows the points' offset_first_only)");
  App.add_option("--shard", O.Shard, "K/N: only graphs whose index is K mod N");
  App.add_flag("--dynamic-row", O.DynamicRow,
               "The row length is the dynamic dim \"H\" too, bound at run time (one compile "
               "a pattern and dtype; not rope, whose row splits into heads when built); each "
               "point's JSON says \"dynamic_row\": true");
  App.add_flag("--flush-kernel", O.FlushKernel,
               "Clear L2 before each run with a kernel (y = x * 0.5 over 256 MB) instead of "
               "cuMemsetD8Async, as do_bench's cache.zero_() is a kernel");
  addScheduleFlags(App, O.Sched);
  CLI11_PARSE(App, Argc, Argv);
  for (const std::string &P : O.Only)
    if (std::find(kPatterns.begin(), kPatterns.end(), P) == kPatterns.end() &&
        std::find(kExtraPatterns.begin(), kExtraPatterns.end(), P) == kExtraPatterns.end()) {
      fmt::print(stderr, "jitfuse_sweep: --only: unknown pattern '{}'; expected one of {},{}\n",
                 P, fmt::join(kPatterns, ","), fmt::join(kExtraPatterns, ","));
      return 2;
    }
  if (!O.PatternOf.empty()) {
    O.PatternType = parseDType(O.PatternOf);
    if (!O.PatternType) {
      fmt::print(stderr, "jitfuse_sweep: --pattern-of: unknown dtype '{}'; expected e.g. bf16, "
                         "f16, f32\n",
                 O.PatternOf);
      return 2;
    }
  }
  try {
    return run(O);
  } catch (const std::exception &E) {
    fmt::print(stderr, "jitfuse_sweep: {}\n", E.what());
    return 1;
  }
}
