//===- support/Error.h - jitfuse's user-facing error type -------*- C++ -*-===//
//
// User errors (bad graphs, bad run-time arguments, compile failures, driver
// failures) throw jitfuse::Error. Internal invariants use assert().
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

/// Throws a jitfuse::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> Fmt, Args &&...A) {
  throw Error(fmt::format(Fmt, std::forward<Args>(A)...));
}

} // namespace jitfuse
