//===- support/Settings.h - every JITFUSE_* variable, one policy -*- C++ -*-===//
//
// The library reads its environment here and nowhere else. One policy for
// every variable: unset or empty means the default; a value that does not
// parse prints one warning naming the variable, the value and the accepted
// values, and the default applies (a typo never stops a program, and never
// goes unnoticed). The README's "Environment" table lists them all.
//
// Read on each call, not cached: a program (or a test) may change a variable
// between compiles. Cheap next to any compile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/Log.h"

#include <cstdint>
#include <string>

namespace jitfuse {

struct Settings {
  /// JITFUSE_CACHE_DIR, else $XDG_CACHE_HOME/jitfuse, else
  /// $HOME/.cache/jitfuse; empty when none is set.
  std::string CacheDir;
  /// JITFUSE_CACHE = on|off (also 1|0, true|false, yes|no). Default on.
  bool CacheEnabled = true;
  /// JITFUSE_CACHE_MAX_BYTES: bytes with an optional K, M or G suffix.
  uint64_t CacheMaxBytes = uint64_t(1) << 30;
  /// JITFUSE_CACHE_SHARED = on|off: accept a cache directory shared with
  /// other users (README, "Reliability"). Default off.
  bool CacheShared = false;
  /// JITFUSE_COMPILE_THREADS: NVRTC programs compiled at once, 1 to
  /// kMaxCompileThreads (larger values are clamped, with a warning).
  /// Default min(hardware threads, 8).
  unsigned CompileThreads = 1;
  static constexpr unsigned kMaxCompileThreads = 64;
  /// JITFUSE_DUMP: comma-separated words graph, plan, cuda, ptx, cubin,
  /// all. CUBINs are binary: written only to JITFUSE_DUMP_DIR.
  bool DumpGraph = false, DumpPlan = false, DumpCuda = false, DumpPtx = false,
       DumpCubin = false;
  /// JITFUSE_DUMP_DIR: dumps go to files there instead of stderr.
  std::string DumpDir;
  /// JITFUSE_LOG = off|info|debug (also 0|1|2). Default off.
  LogLevel Log = LogLevel::Off;

  /// The current environment, with the warnings above for bad values.
  static Settings fromEnv();
  /// JITFUSE_LOG alone (what every log call asks).
  static LogLevel logLevel();
};

} // namespace jitfuse
