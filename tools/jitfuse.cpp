//===- tools/jitfuse.cpp - the jitfuse command-line tool ------------------===//
//
//   jitfuse list                    example graphs and what they compute
//   jitfuse show <example> [views]  graph, plan, CUDA, PTX, DOT (no GPU needed)
//   jitfuse run <example>           what the example program does
//   jitfuse cache [--clear]         where the kernel cache is and what it holds
//
// Exit codes: 0 success (also `run` without a GPU), 1 a failed run or
// compile, 2 a usage error (unknown example, bad flag).
//
//===----------------------------------------------------------------------===//
#include "driver/Compiler.h"
#include "exec/Roofline.h"
#include "examples/ExampleGraphs.h"
#include "examples/ExampleRunner.h"
#include "ir/Printer.h"
#include "runtime/CacheIO.h"
#include "runtime/KernelCache.h"
#include "support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

namespace fs = std::filesystem;
using namespace jitfuse;

namespace {

constexpr int ExitUsage = 2;

struct ShowArgs {
  std::string Example;
  bool Unfused = false;
  bool FastMath = false;
  bool NoMixOrderColumns = false;
  bool Graph = false, Plan = false, Cuda = false, Ptx = false, Dot = false,
       DotGraph = false, Roofline = false, Resources = false;
  std::string Arch;
  std::string Out;
};

/// One thing `show` can print: the flag that selects it, the file suffix
/// under --out, and how to produce it.
struct View {
  bool Selected;
  const char *Suffix;
  std::function<std::string()> Text;
};

/// ptxas's report per kernel variant (Executable::kernelResources).
std::string formatResources(const Executable &X) {
  std::string Out = fmt::format("{:<28} {:>9} {:>7} {:>16} {:>12}\n", "kernel variant",
                                "registers", "stack", "spills st / ld", "static smem");
  for (const rt::KernelResources &K : X.kernelResources())
    Out += fmt::format("{:<28} {:>9} {:>5} B {:>7} / {:>4} B {:>10} B\n", K.Name, K.Registers,
                       K.StackBytes, K.SpillStoreBytes, K.SpillLoadBytes, K.StaticSharedBytes);
  return Out;
}

int cmdList() {
  size_t Width = 0;
  for (const std::string &Name : examples::exampleNames())
    Width = std::max(Width, Name.size());
  for (const std::string &Name : examples::exampleNames())
    fmt::print("{:<{}} {}\n", Name, Width, examples::buildExample(Name).Description);
  return 0;
}

void writeFile(const fs::path &Path, llvm::StringRef Text) {
  std::ofstream F(Path, std::ios::binary);
  F.write(Text.data(), static_cast<std::streamsize>(Text.size()));
  F.close();
  if (!F)
    fail("cannot write '{}'", Path.string());
  fmt::print("wrote {} ({} bytes)\n", Path.string(), Text.size());
}

int cmdShow(const ShowArgs &A) {
  examples::ExampleGraph E = examples::buildExample(A.Example);
  bool AnyView = A.Graph || A.Plan || A.Cuda || A.Ptx || A.Dot || A.DotGraph || A.Roofline ||
                 A.Resources;
  // No view asked for: graph + plan on stdout, or every view under --out.
  bool All = !AnyView && !A.Out.empty();
  bool Default = !AnyView && A.Out.empty();

  CompileOptions CO;
  CO.Fuse = !A.Unfused;
  CO.FastMath = A.FastMath;
  CO.MixOrderColumns = !A.NoMixOrderColumns;
  CO.Arch = A.Arch;
  CO.WantPtx = A.Ptx || All;
  // Every variant's ptxas report, not only the first variants'.
  CO.DeferVariants = !(A.Resources || All);
  Compiler C;
  Executable X = C.compile(*E.G, CO);

  View Views[] = {
      {A.Graph || All || Default, "graph.txt", [&] { return X.graphText(); }},
      {A.Plan || All || Default, "plan.txt", [&] { return X.plan(); }},
      {A.Cuda || All, "cu", [&] { return X.source(); }},
      {A.Ptx || All, "ptx", [&] { return X.ptx(); }},
      {A.Dot || All, "dot", [&] { return X.planDot(); }},
      {A.DotGraph || All, "graph.dot", [&] { return graphToDot(*E.G); }},
      {A.Roofline || All, "roofline.txt",
       [&] {
         std::vector<int64_t> Dims;
         for (const std::string &D : X.dynamicDims())
           Dims.push_back(E.Dims.at(D));
         return formatRoofline(kernelRoofline(X, Dims));
       }},
      {A.Resources || All, "resources.txt", [&] { return formatResources(X); }},
  };
  if (A.Out.empty()) {
    for (const View &V : Views)
      if (V.Selected)
        fmt::print("{}", V.Text());
    return 0;
  }
  std::error_code EC;
  fs::create_directories(A.Out, EC);
  if (EC)
    fail("cannot create output directory '{}': {}", A.Out, EC.message());
  std::string Stem = E.Name + (A.Unfused ? ".unfused" : "") + (A.FastMath ? ".fastmath" : "") +
                     (A.NoMixOrderColumns ? ".nomix" : "");
  for (const View &V : Views)
    if (V.Selected)
      writeFile(fs::path(A.Out) / fmt::format("{}.{}", Stem, V.Suffix), V.Text());
  return 0;
}

std::string cacheDirOrigin() {
  if (std::getenv("JITFUSE_CACHE_DIR"))
    return "JITFUSE_CACHE_DIR";
  if (std::getenv("XDG_CACHE_HOME"))
    return "$XDG_CACHE_HOME/jitfuse";
  return "$HOME/.cache/jitfuse";
}

int cmdCache(bool Clear) {
  rt::CacheConfig Cfg = rt::CacheConfig::fromEnv();
  fmt::print("cache dir:   {} (from {})\n", Cfg.Dir.empty() ? "(none)" : Cfg.Dir,
             cacheDirOrigin());
  fmt::print("disk cache:  {} (JITFUSE_CACHE), bound {} bytes "
             "(JITFUSE_CACHE_MAX_BYTES), {} (JITFUSE_CACHE_SHARED)\n",
             Cfg.Enabled ? "on" : "off", Cfg.MaxBytes, Cfg.Shared ? "shared" : "private");
  std::error_code EC;
  if (Cfg.Dir.empty() || !fs::is_directory(Cfg.Dir, EC)) {
    fmt::print("entries:     0 (the directory does not exist yet)\n");
    return 0;
  }
  if (!Cfg.Shared) {
    // What the library would say with its one warning, said here on demand.
    if (std::string Why = rt::checkTrusted(Cfg.Dir); !Why.empty())
      fmt::print("trust:       refused, {}: compiles cache in memory only "
                 "(JITFUSE_CACHE_SHARED=1 trusts it)\n",
                 Why);
  }
  // Only the names jitfuse creates: the directory may be shared with the
  // user's own files (a `kernel.cu` in $HOME). Non-throwing calls
  // throughout: a symlink loop or an unreadable target is skipped, not fatal.
  uint64_t Entries = 0, EntryBytes = 0, Sources = 0, SourceBytes = 0;
  std::vector<fs::path> ToRemove;
  for (fs::directory_iterator It(Cfg.Dir, EC), End; !EC && It != End; It.increment(EC)) {
    rt::CacheFileName Name = rt::classifyCacheFileName(It->path().filename().string());
    if (Name.Kind != rt::CacheFileKind::Entry && Name.Kind != rt::CacheFileKind::Source)
      continue;
    std::error_code StatEC;
    fs::file_status St = It->symlink_status(StatEC);
    if (StatEC || fs::is_directory(St))
      continue;
    ToRemove.push_back(It->path());
    if (!fs::is_regular_file(St))
      continue; // A symlink or FIFO the cache would refuse: removed, not counted.
    uint64_t Size = It->file_size(StatEC);
    bool Kernel = Name.Kind == rt::CacheFileKind::Entry;
    (Kernel ? Entries : Sources) += 1;
    (Kernel ? EntryBytes : SourceBytes) += StatEC ? 0 : Size;
  }
  if (EC)
    fail("cannot list cache dir '{}': {}", Cfg.Dir, EC.message());
  fmt::print("entries:     {} kernel binaries (<key>.jfk), {} bytes\n", Entries, EntryBytes);
  fmt::print("sources:     {} CUDA sources (<key>.cu), {} bytes\n", Sources, SourceBytes);
  fmt::print("total:       {} bytes\n", EntryBytes + SourceBytes);
  if (!Clear)
    return 0;
  unsigned Removed = 0;
  for (const fs::path &P : ToRemove) {
    if (fs::remove(P, EC))
      ++Removed;
    else if (EC)
      fmt::print(stderr, "jitfuse: cannot remove {}: {}\n", P.string(), EC.message());
  }
  fmt::print("cleared:     removed {} of {} files\n", Removed, ToRemove.size());
  return Removed == ToRemove.size() ? 0 : 1;
}

/// Rejects an unknown example at parse time, so it is a usage error.
CLI::Validator exampleValidator() {
  return CLI::Validator(
      [](std::string &Name) -> std::string {
        for (const std::string &N : examples::exampleNames())
          if (N == Name)
            return "";
        return fmt::format("unknown example '{}'; expected one of: {}", Name,
                           fmt::join(examples::exampleNames(), ", "));
      },
      "EXAMPLE");
}

CLI::Validator archValidator() {
  return CLI::Validator(
      [](std::string &Arch) -> std::string {
        llvm::StringRef A(Arch);
        unsigned Cc = 0;
        if (A.consume_front("sm_") && !A.getAsInteger(10, Cc) && Cc >= 50)
          return "";
        return fmt::format("'{}' is not a target like sm_90", Arch);
      },
      "sm_XX");
}

/// A seed is decimal 0..2^64-1. CLI11's own uint64_t conversion takes -1
/// (wrapping), hex and octal, and a value past 2^64; a typo must not silently
/// pick another seed.
std::optional<uint64_t> parseSeed(llvm::StringRef Text) {
  uint64_t V = 0;
  if (Text.empty() || Text.find_first_not_of("0123456789") != llvm::StringRef::npos ||
      Text.getAsInteger(10, V))
    return std::nullopt;
  return V;
}

CLI::Validator seedValidator() {
  return CLI::Validator(
      [](std::string &Text) -> std::string {
        if (parseSeed(Text))
          return "";
        return fmt::format("'{}' is not a seed; expected a decimal integer from 0 to "
                           "18446744073709551615",
                           Text);
      },
      "UINT64");
}

/// CLI11 reports a word that names no subcommand as "A subcommand is
/// required"; name the word and the choices instead.
std::optional<std::string> unknownSubcommand(const CLI::App &App, int Argc,
                                             char **Argv) {
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef Word(Argv[I]);
    if (Word.startswith("-"))
      continue; // the top-level flags (--help, --version) take no value
    std::vector<std::string> Names;
    for (const CLI::App *Sub : App.get_subcommands({}))
      Names.push_back(Sub->get_name());
    if (std::find(Names.begin(), Names.end(), Word.str()) != Names.end())
      return std::nullopt;
    return fmt::format("unknown subcommand '{}'; expected one of: {}", Word.str(),
                       fmt::join(Names, ", "));
  }
  return std::nullopt;
}

} // namespace

int main(int Argc, char **Argv) {
  CLI::App App("jitfuse: inspect, run and cache the example graphs of the "
               "jitfuse JIT fusion compiler");
  App.set_version_flag("--version", "jitfuse 0.1.0");
  App.require_subcommand(1);

  App.add_subcommand("list", "list the example graphs");

  ShowArgs Show;
  CLI::App *ShowCmd =
      App.add_subcommand("show", "print an example's graph and fused plan (or "
                                 "the views chosen below); needs no GPU");
  ShowCmd->add_option("example", Show.Example, "example name (see `jitfuse list`)")
      ->required()
      ->check(exampleValidator());
  ShowCmd->add_flag("--unfused", Show.Unfused, "one kernel per op instead of fused");
  ShowCmd->add_flag("--fast-math", Show.FastMath,
                    "sigmoid/silu with __expf and __fdividef (CompileOptions::FastMath)");
  ShowCmd->add_flag("--no-mix-order-columns", Show.NoMixOrderColumns,
                    "column reductions in kernels of their own, not in the row kernel of the "
                    "same rows (CompileOptions::MixOrderColumns = false)");
  ShowCmd->add_flag("--graph", Show.Graph, "the graph, one node a line");
  ShowCmd->add_flag("--plan", Show.Plan, "the kernel plan and why each boundary exists");
  ShowCmd->add_flag("--cuda", Show.Cuda, "the generated CUDA program");
  ShowCmd->add_flag("--ptx", Show.Ptx, "the PTX NVRTC makes of it");
  ShowCmd->add_flag("--dot", Show.Dot, "the plan as Graphviz DOT");
  ShowCmd->add_flag("--dot-graph", Show.DotGraph, "the graph as Graphviz DOT");
  ShowCmd->add_flag("--resources", Show.Resources,
                    "registers, stack, spills and static shared memory of each kernel variant "
                    "(ptxas's report)");
  ShowCmd->add_flag("--roofline", Show.Roofline,
                    "predicted bytes per kernel at the example's sizes (`run --profile` "
                    "adds the measured time and GB/s)");
  ShowCmd->add_option("--arch", Show.Arch, "target (default: the GPU's, else sm_90)")
      ->check(archValidator());
  ShowCmd->add_option("--out", Show.Out,
                      "write <example>.graph.txt/.plan.txt/.cu/.ptx/.dot/.graph.dot/"
                      ".roofline.txt/.resources.txt "
                      "into this directory instead of stdout (all of them when "
                      "no view is chosen)");

  std::string RunExample;
  std::string SeedText;
  CLI::App *RunCmd = App.add_subcommand(
      "run", "compile fused and unfused, run both on random inputs and check "
             "them against the reference (shows the plan only without a GPU)");
  RunCmd->add_option("example", RunExample, "example name (see `jitfuse list`)")
      ->required()
      ->check(exampleValidator());
  CLI::Option *SeedOpt =
      RunCmd->add_option("--seed", SeedText, "seed of the random inputs (decimal, 0 to 2^64-1)")
          ->check(seedValidator());
  bool Profile = false;
  RunCmd->add_flag("--profile", Profile,
                   "after the check, time every kernel and print the roofline (predicted "
                   "bytes, median us, GB/s per kernel)");

  bool RunNoMix = false;
  RunCmd->add_flag("--no-mix-order-columns", RunNoMix,
                   "compile the fused plan with CompileOptions::MixOrderColumns = false");

  bool Clear = false;
  CLI::App *CacheCmd = App.add_subcommand(
      "cache", "show the kernel cache dir (JITFUSE_CACHE_DIR), its entries and size");
  CacheCmd->add_flag("--clear", Clear,
                     "delete the kernel cache's <key>.jfk and <key>.cu files in it (nothing else)");

  if (std::optional<std::string> Unknown = unknownSubcommand(App, Argc, Argv)) {
    fmt::print(stderr, "jitfuse: {} (see jitfuse --help)\n", *Unknown);
    return ExitUsage;
  }
  try {
    App.parse(Argc, Argv);
  } catch (const CLI::ParseError &E) {
    if (E.get_exit_code() == 0)
      return App.exit(E);
    fmt::print(stderr, "jitfuse: {} (see jitfuse --help)\n", E.what());
    return ExitUsage;
  }

  try {
    if (App.got_subcommand("list"))
      return cmdList();
    if (ShowCmd->parsed())
      return cmdShow(Show);
    if (RunCmd->parsed()) {
      examples::RunOptions Opts;
      Opts.Profile = Profile;
      Opts.MixOrderColumns = !RunNoMix;
      if (SeedOpt->count())
        Opts.Seed = *parseSeed(SeedText);
      return examples::runExample(examples::buildExample(RunExample), Opts);
    }
    if (CacheCmd->parsed())
      return cmdCache(Clear);
  } catch (const Error &E) {
    fmt::print(stderr, "jitfuse: error: {}\n", E.what());
    return 1;
  } catch (const std::exception &E) {
    // Not a jitfuse::Error (a std::filesystem or allocation failure): still
    // a message and exit 1, never std::terminate.
    fmt::print(stderr, "jitfuse: error: {}\n", E.what());
    return 1;
  } catch (...) {
    fmt::print(stderr, "jitfuse: error: unknown exception\n");
    return 1;
  }
  return ExitUsage;
}
