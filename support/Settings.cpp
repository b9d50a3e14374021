//===- support/Settings.cpp - every JITFUSE_* variable, one policy --------===//
#include "support/Settings.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <thread>

namespace jitfuse {

namespace {

/// A set, non-empty variable, trimmed (paths are taken as they are).
std::optional<llvm::StringRef> getEnv(const char *Name, bool Trim = true) {
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return std::nullopt;
  return Trim ? llvm::StringRef(V).trim() : llvm::StringRef(V);
}

/// The one policy for a value that does not parse: warn once, naming the
/// variable, the value and what is accepted; the caller keeps its default.
void rejectValue(const char *Name, llvm::StringRef Value, llvm::StringRef Accepted,
                 llvm::StringRef Default) {
  warnOnce(fmt::format("{}={}", Name, Value.str()),
           fmt::format("ignoring {}='{}': expected {}; using the default ({})", Name,
                       Value.str(), Accepted.str(), Default.str()));
}

std::optional<bool> parseBool(llvm::StringRef V) {
  if (V.equals_insensitive("on") || V == "1" || V.equals_insensitive("true") ||
      V.equals_insensitive("yes"))
    return true;
  if (V.equals_insensitive("off") || V == "0" || V.equals_insensitive("false") ||
      V.equals_insensitive("no"))
    return false;
  return std::nullopt;
}

void readBool(const char *Name, bool &Out) {
  std::optional<llvm::StringRef> V = getEnv(Name);
  if (!V)
    return;
  if (std::optional<bool> B = parseBool(*V)) {
    Out = *B;
    return;
  }
  rejectValue(Name, *V, "on or off (1/0, true/false, yes/no)", Out ? "on" : "off");
}

std::optional<uint64_t> parseByteSize(llvm::StringRef Digits) {
  uint64_t Scale = 1;
  if (!Digits.empty()) {
    switch (Digits.back()) {
    case 'K': case 'k': Scale = uint64_t(1) << 10; break;
    case 'M': case 'm': Scale = uint64_t(1) << 20; break;
    case 'G': case 'g': Scale = uint64_t(1) << 30; break;
    default: break;
    }
    if (Scale != 1)
      Digits = Digits.drop_back();
  }
  unsigned long long Value = 0;
  if (Digits.empty() || Digits.getAsInteger(10, Value) || Value > UINT64_MAX / Scale)
    return std::nullopt;
  return Value * Scale;
}

void readCompileThreads(Settings &S) {
  S.CompileThreads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::optional<llvm::StringRef> V = getEnv("JITFUSE_COMPILE_THREADS");
  if (!V)
    return;
  unsigned long long N = 0;
  if (V->getAsInteger(10, N) || N < 1) {
    rejectValue("JITFUSE_COMPILE_THREADS", *V, "an integer from 1 to 64",
                std::to_string(S.CompileThreads));
    return;
  }
  if (N > Settings::kMaxCompileThreads) {
    warnOnce(fmt::format("JITFUSE_COMPILE_THREADS={}", V->str()),
             fmt::format("JITFUSE_COMPILE_THREADS='{}' is more than {}; using {}", V->str(),
                         Settings::kMaxCompileThreads, Settings::kMaxCompileThreads));
    N = Settings::kMaxCompileThreads;
  }
  S.CompileThreads = static_cast<unsigned>(N);
}

void readDump(Settings &S) {
  std::optional<llvm::StringRef> V = getEnv("JITFUSE_DUMP");
  if (!V)
    return;
  llvm::SmallVector<llvm::StringRef, 4> Words;
  V->split(Words, ',', -1, /*KeepEmpty=*/false);
  std::string Unknown;
  for (llvm::StringRef W : Words) {
    W = W.trim();
    bool All = W == "all";
    bool Known = All;
    auto Set = [&](llvm::StringRef Name, bool &Flag) {
      if (All || W == Name) {
        Flag = true;
        Known = true;
      }
    };
    Set("graph", S.DumpGraph);
    Set("plan", S.DumpPlan);
    Set("cuda", S.DumpCuda);
    Set("ptx", S.DumpPtx);
    Set("cubin", S.DumpCubin);
    if (!Known && !W.empty())
      Unknown += (Unknown.empty() ? "'" : ", '") + W.str() + "'";
  }
  if (!Unknown.empty())
    warnOnce(fmt::format("JITFUSE_DUMP={}", V->str()),
             fmt::format("JITFUSE_DUMP='{}': ignoring {}; expected a comma-separated list of "
                         "graph, plan, cuda, ptx, cubin, all",
                         V->str(), Unknown));
}

} // namespace

LogLevel Settings::logLevel() {
  std::optional<llvm::StringRef> V = getEnv("JITFUSE_LOG");
  if (!V)
    return LogLevel::Off;
  if (V->equals_insensitive("off") || *V == "0")
    return LogLevel::Off;
  if (V->equals_insensitive("info") || *V == "1")
    return LogLevel::Info;
  if (V->equals_insensitive("debug") || *V == "2")
    return LogLevel::Debug;
  rejectValue("JITFUSE_LOG", *V, "off, info or debug (0, 1, 2)", "off");
  return LogLevel::Off;
}

Settings Settings::fromEnv() {
  Settings S;
  if (std::optional<llvm::StringRef> Dir = getEnv("JITFUSE_CACHE_DIR", false))
    S.CacheDir = Dir->str();
  else if (std::optional<llvm::StringRef> Xdg = getEnv("XDG_CACHE_HOME", false))
    S.CacheDir = fmt::format("{}/jitfuse", Xdg->str());
  else if (std::optional<llvm::StringRef> Home = getEnv("HOME", false))
    S.CacheDir = fmt::format("{}/.cache/jitfuse", Home->str());
  readBool("JITFUSE_CACHE", S.CacheEnabled);
  readBool("JITFUSE_CACHE_SHARED", S.CacheShared);
  if (std::optional<llvm::StringRef> Max = getEnv("JITFUSE_CACHE_MAX_BYTES")) {
    if (std::optional<uint64_t> Bytes = parseByteSize(*Max))
      S.CacheMaxBytes = *Bytes;
    else
      rejectValue("JITFUSE_CACHE_MAX_BYTES", *Max,
                  "a byte count with an optional K, M or G suffix (e.g. 1073741824 or 512M)",
                  "1G");
  }
  readCompileThreads(S);
  readDump(S);
  if (std::optional<llvm::StringRef> Dir = getEnv("JITFUSE_DUMP_DIR", false))
    S.DumpDir = Dir->str();
  S.Log = logLevel();
  return S;
}

} // namespace jitfuse
