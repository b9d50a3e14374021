//===- tests/RandomGraphPrint.cpp - graphs as pasteable C++ builder code --===//
#include "RandomGraph.h"

#include "ir/Printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace jitfuse::test {

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static llvm::StringRef opEnumName(Op O) {
  switch (O) {
#define JITFUSE_OP(Name, ...)                                                  \
  case Op::Name:                                                               \
    return #Name;
#include "ir/Ops.def"
  }
  return "?";
}

static std::string dtypeCpp(DType T) {
  return T == DType::Bool ? "boolean" : dtypeName(T).str();
}

/// A C++ string literal for any bytes; octal escapes so no digit run-on.
static std::string cppString(llvm::StringRef S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\')
      Out += fmt::format("\\{}", static_cast<char>(C));
    else if (C < 0x20 || C >= 0x7f || C == '?')
      Out += fmt::format("\\{:03o}", C);
    else
      Out += static_cast<char>(C);
  }
  return Out + "\"";
}

static std::string dimsCpp(llvm::ArrayRef<Dim> Dims) {
  std::string Out = "{";
  for (size_t I = 0; I < Dims.size(); ++I) {
    Out += I ? ", " : "";
    Out += Dims[I].isDynamic() ? cppString(Dims[I].Name)
                               : fmt::format("int64_t({})", Dims[I].Size);
  }
  return Out + "}";
}

static std::string doubleCpp(double V) {
  if (std::isnan(V))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(V))
    return V > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  std::string S = formatDouble(V);
  if (S.find_first_of(".eE") == std::string::npos)
    S += ".0";
  return S;
}

std::string printAsCpp(const Graph &G) {
  std::string Out;
  for (NodeId Id = 0; Id < G.size(); ++Id) {
    const Node &N = G.node(Id);
    auto V = [&](size_t K) { return fmt::format("v{}", N.Operands[K]); };
    std::string Rhs;
    switch (opKind(N.Kind)) {
    case OpKind::Leaf:
      if (N.Kind == Op::Input)
        Rhs = fmt::format("g.input({}, {}, {}{})", cppString(N.Name), dtypeCpp(N.Type),
                          dimsCpp(N.Dims), N.Strides.empty() ? "" : ", " + dimsCpp(N.Strides));
      else if (N.Kind == Op::Scalar)
        Rhs = fmt::format("g.scalar({}, {})", cppString(N.Name), dtypeCpp(N.Type));
      else
        Rhs = fmt::format("g.constant({}, {})", doubleCpp(N.F), dtypeCpp(N.Type));
      break;
    case OpKind::Unary:
      Rhs = N.Kind == Op::Cast ? fmt::format("cast({}, {})", V(0), dtypeCpp(N.Type))
                               : fmt::format("unary(Op::{}, {})", opEnumName(N.Kind).str(), V(0));
      break;
    case OpKind::Binary:
      Rhs = fmt::format("binary(Op::{}, {}, {})", opEnumName(N.Kind).str(), V(0), V(1));
      break;
    case OpKind::Ternary:
      Rhs = fmt::format("{}({}, {}, {})", N.Kind == Op::Where ? "where" : "fma", V(0), V(1),
                        V(2));
      break;
    case OpKind::Reduce:
      if (N.scope() == ReduceScope::Axes) {
        std::string Axes;
        for (unsigned I = 0; I < 32; ++I)
          if (N.reducedAxes() & (1u << I))
            Axes += (Axes.empty() ? "" : ", ") + std::to_string(I);
        Rhs = fmt::format("reduce(Op::{}, {}, {{{}}})", opEnumName(N.Kind).str(), V(0), Axes);
        break;
      }
      Rhs = fmt::format("reduce(Op::{}, {}, ReduceScope::{})", opEnumName(N.Kind).str(), V(0),
                        N.scope() == ReduceScope::All ? "All" : "LastAxis");
      break;
    case OpKind::View:
      if (N.Kind == Op::Broadcast)
        Rhs = fmt::format("broadcastTo({}, {})", V(0), dimsCpp(N.Dims));
      else if (N.Kind == Op::Reshape)
        Rhs = fmt::format("reshape({}, {})", V(0), dimsCpp(N.Dims));
      else if (N.Kind == Op::Slice)
        Rhs = fmt::format("slice({}, {}, {})", V(0), N.A0, N.A1);
      else if (N.Kind == Op::Permute)
        Rhs = fmt::format("permute({}, {{{}}})", V(0), fmt::join(N.permutation(), ", "));
      else {
        std::string Xs;
        for (size_t K = 0; K < N.Operands.size(); ++K)
          Xs += (K ? ", " : "") + V(K);
        Rhs = fmt::format("concat({{{}}})", Xs);
      }
      break;
    case OpKind::Random:
      Rhs = fmt::format("randUniform({}, {}, {}, {})", V(0), dimsCpp(N.Dims), N.A0,
                        dtypeCpp(N.Type));
      break;
    }
    Out += fmt::format("auto v{} = {};\n", Id, Rhs);
  }
  for (const GraphOutput &O : G.outputs())
    Out += fmt::format("g.output({}, v{}{});\n", cppString(O.Name), O.Id,
                       O.Strides.empty() ? "" : ", " + dimsCpp(O.Strides));
  return Out;
}

std::string describeBindings(const Recipe &R) {
  std::string Out = "// dims:";
  for (const auto &[Name, V] : R.Dims)
    Out += fmt::format(" {}={}", Name, V);
  Out += "; scalars:";
  for (const auto &[Name, V] : R.Scalars)
    Out += fmt::format(" {}={}", Name, V);
  return Out;
}

} // namespace jitfuse::test
