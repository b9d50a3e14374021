//===- support/Log.h - quiet by default: logs and warnings ------*- C++ -*-===//
//
// jitfuse prints nothing unless asked (JITFUSE_LOG) or unless something is
// wrong with the user's setup (a warning, once per cause per process). Both
// go to one sink, stderr by default; tests capture it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <functional>
#include <string>

namespace jitfuse {

/// JITFUSE_LOG: how much compile-time information to print.
enum class LogLevel : uint8_t {
  Off,   // default: nothing
  Info,  // one line per compile: kernels, cache hit or miss, milliseconds
  Debug, // also each compile stage's time and the cache's decisions
};

/// Where log lines and warnings go (one line per call, without the newline).
using DiagnosticSink = std::function<void(llvm::StringRef Line)>;
/// Replaces the sink (stderr by default); returns the previous one. An empty
/// function restores stderr.
DiagnosticSink setDiagnosticSink(DiagnosticSink Sink);

/// True when JITFUSE_LOG asks for at least \p Level.
bool logEnabled(LogLevel Level);
/// Prints "jitfuse: <Msg>" when JITFUSE_LOG asks for at least \p Level.
void logMessage(LogLevel Level, llvm::StringRef Msg);

/// Prints "jitfuse: warning: <Msg>" the first time \p Key is seen in this
/// process; returns whether it printed. Key names the cause (e.g. the
/// variable and its value, or a directory), so a repeated cause stays quiet.
bool warnOnce(llvm::StringRef Key, llvm::StringRef Msg);

} // namespace jitfuse
