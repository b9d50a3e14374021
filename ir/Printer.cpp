//===- ir/Printer.cpp - text and DOT views of a graph ---------------------===//
#include "ir/Printer.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace jitfuse {

std::string formatDouble(double V) { return fmt::format("{}", V); }

/// The attributes printed after a node's type: by kind, so a new op of an
/// existing kind needs nothing here and a new kind is named by the compiler.
static std::string attrs(const Node &N) {
  switch (opKind(N.Kind)) {
  case OpKind::Leaf: // input, scalar, constant
    if (N.Kind == Op::Constant)
      return " " + formatDouble(N.F);
    return fmt::format(" \"{}\"{}", N.Name,
                       N.Strides.empty() ? "" : " strides=" + shapeStr(N.Strides));
  case OpKind::Reduce:
    if (N.scope() == ReduceScope::Axes) {
      std::string Axes;
      for (unsigned I = 0; I < N.rank(); ++I)
        if (N.reducedAxes() & (1u << I))
          Axes += (Axes.empty() ? "" : ",") + std::to_string(I);
      return " axes={" + Axes + "}";
    }
    return N.scope() == ReduceScope::All ? " all" : " last-axis";
  case OpKind::View:
    if (N.Kind == Op::Permute)
      return fmt::format(" perm=[{}]", fmt::join(N.permutation(), ","));
    return N.Kind == Op::Slice ? fmt::format(" [{}:{}]", N.A0, N.A1) : "";
  case OpKind::Random:
    return fmt::format(" stream={}", N.A0);
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Ternary:
    return "";
  }
  JITFUSE_UNREACHABLE("unknown op kind");
}

std::string printNode(const Graph &G, NodeId Id) {
  const Node &N = G.node(Id);
  std::string Ops;
  for (NodeId O : N.Operands)
    Ops += (Ops.empty() ? "%" : ", %") + std::to_string(O);
  return fmt::format("%{} = {}({}) : {}{}{}", Id, opName(N.Kind).str(), Ops,
                     dtypeName(N.Type).str(), shapeStr(N.Dims), attrs(N));
}

std::string printGraph(const Graph &G) {
  std::string Out;
  for (NodeId Id = 0; Id < G.size(); ++Id)
    Out += printNode(G, Id) + "\n";
  for (const GraphOutput &O : G.outputs())
    Out += fmt::format("output \"{}\" = %{}{}\n", O.Name, O.Id,
                       O.Strides.empty() ? "" : " strides=" + shapeStr(O.Strides));
  return Out;
}

std::string dotEscape(llvm::StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += C;
    } else if (C == '\n' || C == '\r') {
      Out += "\\n"; // a line break in the label, never a raw one
    } else if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f) {
      // No DOT escape exists: show it as text "\xHH" (backslash escaped).
      Out += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(C));
    } else {
      Out += C;
    }
  }
  return Out;
}

std::string graphToDot(const Graph &G) {
  std::string Out = "digraph jitfuse {\n  rankdir=TB;\n  node [shape=box, "
                    "fontname=\"monospace\"];\n";
  for (NodeId Id = 0; Id < G.size(); ++Id) {
    const Node &N = G.node(Id);
    // Dim names and input names are user text; everything is escaped.
    std::string Label = fmt::format(
        "{}\\n{}",
        dotEscape(fmt::format("%{} {}{}", Id, opName(N.Kind).str(), attrs(N))),
        dotEscape(dtypeName(N.Type).str() + shapeStr(N.Dims)));
    Out += fmt::format("  n{} [label=\"{}\"{}];\n", Id, Label,
                       N.isLeaf() ? ", style=rounded" : "");
    for (NodeId O : N.Operands)
      Out += fmt::format("  n{} -> n{};\n", O, Id);
  }
  for (size_t I = 0; I < G.outputs().size(); ++I) {
    const GraphOutput &O = G.outputs()[I];
    Out += fmt::format("  out{} [label=\"{}\", shape=ellipse];\n  n{} -> out{};\n",
                       I, dotEscape(O.Name), O.Id, I);
  }
  return Out + "}\n";
}

} // namespace jitfuse
