//===- bench/Json.h - a tiny JSON value and writer for bench results -*- C++ -*-===//
//
// No JSON library is installed by scripts/setup-deps (nlohmann-json is not a
// dependency), and the bench only writes JSON, so a small ordered value type
// is enough. Object keys keep insertion order so the file diffs cleanly run to
// run; non-finite numbers are written as null (JSON has no NaN).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace jitfuse::bench {

class Json {
public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default; // null
  Json(std::nullptr_t) {}
  Json(bool B) : V(B) {}
  Json(double D) : V(D) {}
  Json(int I) : V(static_cast<double>(I)) {}
  Json(unsigned I) : V(static_cast<double>(I)) {}
  Json(int64_t I) : V(static_cast<double>(I)) {}
  Json(uint64_t I) : V(static_cast<double>(I)) {}
  Json(const char *S) : V(std::string(S)) {}
  Json(std::string S) : V(std::move(S)) {}
  Json(llvm::StringRef S) : V(S.str()) {}

  static Json array() { Json J; J.V = Array(); return J; }
  static Json object() { Json J; J.V = Object(); return J; }

  /// Object member (added when missing). The value must be an object.
  Json &operator[](llvm::StringRef Key);
  /// The member named Key, or null when this is not an object or lacks it.
  const Json *find(llvm::StringRef Key) const;
  bool isNull() const { return std::holds_alternative<std::nullptr_t>(V); }
  /// The number held, or NaN for any other value.
  double number() const;
  /// The string held, or dump() for any other value.
  std::string str() const;

  /// Appends to an array value.
  void push(Json J);

  /// Indented text, two spaces per level.
  std::string dump(int Indent = 0) const;

private:
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> V;
};

/// S as a JSON string literal, quotes included.
std::string jsonQuote(llvm::StringRef S);

} // namespace jitfuse::bench
