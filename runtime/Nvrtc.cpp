//===- runtime/Nvrtc.cpp - CUDA C++ to CUBIN with NVRTC -------------------===//

#include "runtime/Nvrtc.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>

#include <nvrtc.h>

#include <link.h>
#include <sys/stat.h>

#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#ifndef JITFUSE_CUDA_INCLUDE_DIR
#error "JITFUSE_CUDA_INCLUDE_DIR must be defined by the build"
#endif

namespace jitfuse::rt {

namespace {

/// Owns an nvrtcProgram so every exit path destroys it.
class Program {
public:
  Program(llvm::StringRef Source, llvm::StringRef Name) {
    std::string Src = Source.str(); // NVRTC wants NUL-terminated strings.
    std::string N = Name.str();
    check(nvrtcCreateProgram(&Handle, Src.c_str(), N.c_str(), 0, nullptr,
                             nullptr),
          "nvrtcCreateProgram");
  }
  ~Program() {
    if (Handle)
      (void)nvrtcDestroyProgram(&Handle);
  }
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  nvrtcProgram get() const { return Handle; }

  static void check(nvrtcResult R, llvm::StringRef What) {
    if (R != NVRTC_SUCCESS)
      fail("{} failed: {}", What.str(), nvrtcGetErrorString(R));
  }

  std::string log() const {
    size_t Size = 0;
    check(nvrtcGetProgramLogSize(Handle, &Size), "nvrtcGetProgramLogSize");
    std::string Log(Size, '\0');
    if (Size)
      check(nvrtcGetProgramLog(Handle, Log.data()), "nvrtcGetProgramLog");
    // The size includes the terminating NUL.
    while (!Log.empty() && (Log.back() == '\0' || Log.back() == '\n'))
      Log.pop_back();
    return Log;
  }

private:
  nvrtcProgram Handle = nullptr;
};

std::string joinOptions(llvm::ArrayRef<std::string> Options) {
  std::string Out;
  for (const std::string &O : Options) {
    if (!Out.empty())
      Out += ' ';
    Out += O;
  }
  return Out;
}

/// Compiles and returns the log; throws with the log when compilation fails.
std::string compileOrThrow(const Program &P, llvm::StringRef ProgramName,
                           llvm::ArrayRef<std::string> Options) {
  llvm::SmallVector<const char *, 8> Argv;
  for (const std::string &O : Options)
    Argv.push_back(O.c_str());
  nvrtcResult R =
      nvrtcCompileProgram(P.get(), static_cast<int>(Argv.size()), Argv.data());
  std::string Log = P.log();
  if (R != NVRTC_SUCCESS)
    fail("NVRTC failed to compile '{}' ({}) with options [{}]:\n{}",
         ProgramName.str(), nvrtcGetErrorString(R), joinOptions(Options),
         Log.empty() ? "<empty log>" : Log);
  return Log;
}

/// Index of the option naming a real architecture, if any.
std::optional<size_t> findRealArchOption(llvm::ArrayRef<std::string> Options) {
  for (size_t I = 0; I < Options.size(); ++I) {
    llvm::StringRef O = Options[I];
    if ((O.consume_front("--gpu-architecture=") || O.consume_front("-arch=")) &&
        O.startswith("sm_"))
      return I;
  }
  return std::nullopt;
}

/// Path of the loaded libnvrtc shared object. Walks the loaded objects rather
/// than asking dladdr about a function address, which in a non-PIE binary
/// names the executable's PLT stub.
std::optional<std::string> loadedNvrtcLibrary() {
  std::optional<std::string> Found;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info *Info, size_t, void *Data) -> int {
        llvm::StringRef Name(Info->dlpi_name ? Info->dlpi_name : "");
        llvm::StringRef File = Name.substr(Name.rfind('/') + 1);
        if (!File.startswith("libnvrtc.")) // Not libnvrtc-builtins.
          return 0;
        *static_cast<std::optional<std::string> *>(Data) = Name.str();
        return 1;
      },
      &Found);
  return Found;
}

} // namespace

CompiledProgram compileCuda(llvm::StringRef Source, llvm::StringRef ProgramName,
                            llvm::ArrayRef<std::string> Options, bool WantPtx) {
  std::optional<size_t> ArchIdx = findRealArchOption(Options);
  if (!ArchIdx)
    fail("cannot compile '{}' to a CUBIN: the NVRTC options [{}] name no real "
         "architecture; expected --gpu-architecture=sm_XX",
         ProgramName.str(), joinOptions(Options));

  CompiledProgram Out;
  {
    Program P(Source, ProgramName);
    Out.Log = compileOrThrow(P, ProgramName, Options);
    size_t Size = 0;
    Program::check(nvrtcGetCUBINSize(P.get(), &Size), "nvrtcGetCUBINSize");
    if (Size == 0)
      fail("NVRTC produced an empty CUBIN for '{}' with options [{}]",
           ProgramName.str(), joinOptions(Options));
    Out.Cubin.resize(Size);
    Program::check(nvrtcGetCUBIN(P.get(), Out.Cubin.data()), "nvrtcGetCUBIN");
  }
  if (!WantPtx)
    return Out;

  std::vector<std::string> PtxOptions(Options.begin(), Options.end());
  std::string &Arch = PtxOptions[*ArchIdx];
  Arch.replace(Arch.find("sm_"), 3, "compute_");
  Program P(Source, ProgramName);
  (void)compileOrThrow(P, ProgramName, PtxOptions);
  size_t Size = 0;
  Program::check(nvrtcGetPTXSize(P.get(), &Size), "nvrtcGetPTXSize");
  Out.Ptx.resize(Size);
  if (Size)
    Program::check(nvrtcGetPTX(P.get(), Out.Ptx.data()), "nvrtcGetPTX");
  while (!Out.Ptx.empty() && Out.Ptx.back() == '\0')
    Out.Ptx.pop_back();
  return Out;
}

std::vector<CompiledProgram> compileCudaParallel(llvm::ArrayRef<std::string> Sources,
                                                 llvm::StringRef ProgramName,
                                                 llvm::ArrayRef<std::string> Options,
                                                 unsigned Threads) {
  std::vector<CompiledProgram> Out(Sources.size());
  std::vector<std::exception_ptr> Errors(Sources.size());
  std::atomic<size_t> Next{0};
  auto Work = [&] {
    for (size_t I = Next++; I < Sources.size(); I = Next++) {
      try {
        Out[I] = compileCuda(Sources[I], fmt::format("{}_part{}", ProgramName.str(), I),
                             Options);
      } catch (...) {
        Errors[I] = std::current_exception();
      }
    }
  };
  size_t N = std::min<size_t>(std::max(1u, Threads), Sources.size());
  std::vector<std::thread> Pool;
  for (size_t T = 1; T < N; ++T)
    Pool.emplace_back([&] {
      pthread_setname_np(pthread_self(), "jitfuse-nvrtc");
      Work();
    });
  Work();
  for (std::thread &T : Pool)
    T.join();
  for (std::exception_ptr &E : Errors)
    if (E)
      std::rethrow_exception(E);
  return Out;
}

const std::string &nvrtcVersionString() {
  static const std::string Version = [] {
    int Major = 0, Minor = 0;
    Program::check(nvrtcVersion(&Major, &Minor), "nvrtcVersion");
    std::string V = fmt::format("{}.{}", Major, Minor);
    // nvrtcVersion has no patch level; the library file that is actually
    // loaded does tell builds apart.
    if (std::optional<std::string> Lib = loadedNvrtcLibrary()) {
      struct stat St {};
      if (::stat(Lib->c_str(), &St) == 0) {
        llvm::StringRef Path(*Lib);
        V += fmt::format(" {} {}", Path.substr(Path.rfind('/') + 1).str(),
                         static_cast<long long>(St.st_size));
      }
    }
    return V;
  }();
  return Version;
}

std::vector<std::string> defaultNvrtcOptions(int SmMajor, int SmMinor) {
  // -minimal leaves out what generated kernels never use (texture and
  // surface types, device-side launches, the runtime API's types): ~12 ms
  // less front end per program, byte-identical CUBINs on 63 generated
  // programs (docs/MEASUREMENTS.md).
  // --ptxas-options=-v puts each kernel's registers, spills and stack in the
  // log (parsePtxasReport); the CUBIN's code is unchanged (only its tool
  // note records the option; checked section by section, 2026-12-01).
  return {fmt::format("--gpu-architecture=sm_{}{}", SmMajor, SmMinor),
          "--std=c++17", "-minimal", "--ptxas-options=-v",
          fmt::format("-I{}", JITFUSE_CUDA_INCLUDE_DIR)};
}

std::vector<KernelResources> parsePtxasReport(llvm::StringRef Log) {
  // ptxas -v prints, per entry function:
  //   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
  //   ptxas         .     S bytes stack frame, SS bytes spill stores, SL bytes spill loads
  //   ptxas info    : Used R registers, used 1 barriers, B bytes smem
  std::vector<KernelResources> Out;
  auto NumberBefore = [](llvm::StringRef Line, llvm::StringRef Unit) {
    size_t At = Line.find(Unit);
    if (At == llvm::StringRef::npos)
      return 0;
    llvm::StringRef Head = Line.take_front(At).rtrim();
    llvm::StringRef Digits = Head.substr(Head.find_last_not_of("0123456789") + 1);
    int V = 0;
    return Digits.getAsInteger(10, V) ? 0 : V;
  };
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  Log.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    if (Line.contains("Compiling entry function '")) {
      llvm::StringRef Rest = Line.split("Compiling entry function '").second;
      Out.push_back({Rest.split('\'').first.str()});
      continue;
    }
    if (Out.empty())
      continue;
    KernelResources &K = Out.back();
    if (Line.contains("bytes stack frame")) {
      K.StackBytes = NumberBefore(Line, " bytes stack frame");
      K.SpillStoreBytes = NumberBefore(Line, " bytes spill stores");
      K.SpillLoadBytes = NumberBefore(Line, " bytes spill loads");
    } else if (Line.contains("Used ") && Line.contains(" registers")) {
      K.Registers = NumberBefore(Line, " registers");
      K.StaticSharedBytes = NumberBefore(Line, " bytes smem");
    }
  }
  return Out;
}

} // namespace jitfuse::rt
