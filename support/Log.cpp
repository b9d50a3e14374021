//===- support/Log.cpp - quiet by default: logs and warnings --------------===//
#include "support/Log.h"

#include "support/Settings.h"

#include <fmt/format.h>

#include <cstdio>
#include <mutex>
#include <set>

namespace jitfuse {

namespace {

std::mutex &sinkLock() {
  static std::mutex M;
  return M;
}

DiagnosticSink &sink() {
  static DiagnosticSink S;
  return S;
}

void emit(llvm::StringRef Line) {
  std::lock_guard<std::mutex> Guard(sinkLock());
  if (sink()) {
    sink()(Line);
    return;
  }
  std::fprintf(stderr, "%.*s\n", static_cast<int>(Line.size()), Line.data());
}

} // namespace

DiagnosticSink setDiagnosticSink(DiagnosticSink Sink) {
  std::lock_guard<std::mutex> Guard(sinkLock());
  std::swap(sink(), Sink);
  return Sink;
}

bool logEnabled(LogLevel Level) {
  return Level != LogLevel::Off && Settings::logLevel() >= Level;
}

void logMessage(LogLevel Level, llvm::StringRef Msg) {
  if (logEnabled(Level))
    emit(fmt::format("jitfuse: {}", Msg.str()));
}

bool warnOnce(llvm::StringRef Key, llvm::StringRef Msg) {
  static std::mutex Lock;
  static std::set<std::string> Seen;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (!Seen.insert(Key.str()).second)
      return false;
  }
  emit(fmt::format("jitfuse: warning: {}", Msg.str()));
  return true;
}

} // namespace jitfuse
