//===- support/Error.h - user errors and internal errors --------*- C++ -*-===//
//
// Two kinds of failure, two types:
//
// - jitfuse::Error: the caller's mistake or the environment's (a bad graph,
//   bad run-time arguments, an NVRTC or driver failure). The message names
//   the node, input or path and what was expected. Throw it with fail().
// - jitfuse::InternalError: a broken invariant inside jitfuse, i.e. a bug in
//   jitfuse whatever the input. Thrown by JITFUSE_CHECK, JITFUSE_INTERNAL and
//   JITFUSE_UNREACHABLE in every build type (never compiled out, never an
//   abort that takes the host program down); the message says where and asks
//   for a report.
//
// InternalError deliberately does not derive from Error: `catch (Error &)`
// around user input must not swallow jitfuse's own bugs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace jitfuse {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &Msg) : std::runtime_error(Msg) {}
};

class InternalError : public std::logic_error {
public:
  explicit InternalError(const std::string &Msg) : std::logic_error(Msg) {}
};

/// Throws a jitfuse::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> Fmt, Args &&...A) {
  throw Error(fmt::format(Fmt, std::forward<Args>(A)...));
}

/// Throws a jitfuse::InternalError for a broken invariant at File:Line.
[[noreturn]] inline void internalError(const char *File, int Line, const std::string &Msg) {
  throw InternalError(fmt::format("jitfuse internal error at {}:{}: {} (a bug in jitfuse; "
                                  "please report it with the graph that triggered it)",
                                  File, Line, Msg));
}

} // namespace jitfuse

/// Checks an internal invariant (not the user's input) in every build type.
#define JITFUSE_CHECK(Cond, Msg)                                               \
  do {                                                                         \
    if (!(Cond))                                                               \
      ::jitfuse::internalError(__FILE__, __LINE__,                             \
                               std::string("check '" #Cond "' failed: ") + (Msg)); \
  } while (false)

/// Throws an InternalError with a fmt-formatted message.
#define JITFUSE_INTERNAL(...)                                                  \
  ::jitfuse::internalError(__FILE__, __LINE__, fmt::format(__VA_ARGS__))

/// Marks code that exhaustive switches or earlier checks make unreachable.
#define JITFUSE_UNREACHABLE(Msg) ::jitfuse::internalError(__FILE__, __LINE__, (Msg))
