//===- bench/Json.cpp - a tiny JSON value and writer ----------------------===//
#include "Json.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>

namespace jitfuse::bench {

Json &Json::operator[](llvm::StringRef Key) {
  auto *O = std::get_if<Object>(&V);
  assert(O && "Json::operator[] on a non-object");
  for (auto &[K, Val] : *O)
    if (K == Key)
      return Val;
  O->emplace_back(Key.str(), Json());
  return O->back().second;
}

const Json *Json::find(llvm::StringRef Key) const {
  if (auto *O = std::get_if<Object>(&V))
    for (auto &[K, Val] : *O)
      if (K == Key)
        return &Val;
  return nullptr;
}

double Json::number() const {
  auto *D = std::get_if<double>(&V);
  return D ? *D : NAN;
}

std::string Json::str() const {
  auto *S = std::get_if<std::string>(&V);
  return S ? *S : dump();
}

void Json::push(Json J) {
  auto *A = std::get_if<Array>(&V);
  assert(A && "Json::push on a non-array");
  A->push_back(std::move(J));
}

std::string jsonQuote(llvm::StringRef S) {
  std::string Out = "\"";
  for (char C : S) {
    switch (C) {
    case '"': Out += "\\\""; break;
    case '\\': Out += "\\\\"; break;
    case '\n': Out += "\\n"; break;
    case '\r': Out += "\\r"; break;
    case '\t': Out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(C) < 0x20)
        Out += fmt::format("\\u{:04x}", static_cast<unsigned>(C));
      else
        Out += C;
    }
  }
  return Out + "\"";
}

std::string Json::dump(int Indent) const {
  std::string Pad(2 * (Indent + 1), ' '), Close(2 * Indent, ' ');
  if (std::holds_alternative<std::nullptr_t>(V))
    return "null";
  if (auto *B = std::get_if<bool>(&V))
    return *B ? "true" : "false";
  if (auto *D = std::get_if<double>(&V)) {
    if (!std::isfinite(*D))
      return "null";
    // Integers print exactly (byte counts reach 2^33); others with enough
    // digits to round-trip a timing.
    if (*D == std::floor(*D) && std::fabs(*D) < 9e15)
      return fmt::format("{}", static_cast<int64_t>(*D));
    return fmt::format("{:.9g}", *D);
  }
  if (auto *S = std::get_if<std::string>(&V))
    return jsonQuote(*S);
  if (auto *A = std::get_if<Array>(&V)) {
    if (A->empty())
      return "[]";
    std::string Out = "[\n";
    for (size_t I = 0; I < A->size(); ++I)
      Out += Pad + (*A)[I].dump(Indent + 1) + (I + 1 < A->size() ? ",\n" : "\n");
    return Out + Close + "]";
  }
  const Object &O = std::get<Object>(V);
  if (O.empty())
    return "{}";
  std::string Out = "{\n";
  for (size_t I = 0; I < O.size(); ++I)
    Out += Pad + jsonQuote(O[I].first) + ": " + O[I].second.dump(Indent + 1) +
           (I + 1 < O.size() ? ",\n" : "\n");
  return Out + Close + "}";
}

} // namespace jitfuse::bench
