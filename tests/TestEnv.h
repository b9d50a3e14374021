//===- tests/TestEnv.h - environment and diagnostics, scoped ----*- C++ -*-===//
#pragma once

#include "support/Log.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse::test {

/// Occurrences of \p Needle in \p Text (a warning that must appear once, a
/// line of generated code that must appear so many times).
inline size_t countOf(const std::string &Text, const std::string &Needle) {
  size_t N = 0;
  for (size_t At = Text.find(Needle); At != std::string::npos;
       At = Text.find(Needle, At + 1))
    ++N;
  return N;
}

/// The body of each `.entry` of PTX text \p Ptx, by kernel name.
inline std::map<std::string, std::string> ptxEntries(const std::string &Ptx) {
  std::map<std::string, std::string> Out;
  size_t Pos = 0;
  while ((Pos = Ptx.find(".entry ", Pos)) != std::string::npos) {
    size_t NameEnd = Ptx.find('(', Pos);
    std::string Name = Ptx.substr(Pos + 7, NameEnd - Pos - 7);
    size_t End = Ptx.find("\n}\n", NameEnd);
    Out[Name] = Ptx.substr(Pos, End - Pos);
    Pos = End;
  }
  return Out;
}

/// Sets an environment variable for one scope (nullptr unsets it),
/// restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const char *Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      ::setenv(Name, Value, 1);
    else
      ::unsetenv(Name);
  }
  ~ScopedEnv() {
    if (Saved)
      ::setenv(Name, Saved->c_str(), 1);
    else
      ::unsetenv(Name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *Name;
  std::optional<std::string> Saved;
};

/// Captures jitfuse's log lines and warnings for one scope.
class CapturedDiagnostics {
public:
  CapturedDiagnostics()
      : Old(setDiagnosticSink([this](llvm::StringRef L) {
          std::lock_guard<std::mutex> G(Lock);
          Lines.push_back(L.str());
        })) {}
  ~CapturedDiagnostics() { setDiagnosticSink(std::move(Old)); }
  CapturedDiagnostics(const CapturedDiagnostics &) = delete;
  CapturedDiagnostics &operator=(const CapturedDiagnostics &) = delete;

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> G(Lock);
    return Lines;
  }
  /// Every captured line joined with newlines.
  std::string text() const {
    std::string Out;
    for (const std::string &L : lines())
      Out += L + "\n";
    return Out;
  }

private:
  mutable std::mutex Lock;
  std::vector<std::string> Lines;
  DiagnosticSink Old;
};

} // namespace jitfuse::test
