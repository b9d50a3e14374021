//===- ir/Printer.h - text and DOT views of a graph -------------*- C++ -*-===//
#pragma once

#include "ir/Graph.h"

#include <string>

namespace jitfuse {

/// One line per node: `%id = op(operands) : dtype[shape]  attrs`, then the
/// outputs. Deterministic.
std::string printGraph(const Graph &G);
/// One node as it appears in printGraph (no newline).
std::string printNode(const Graph &G, NodeId Id);
/// Graphviz DOT of the graph (nodes in id order).
std::string graphToDot(const Graph &G);
/// Escapes user text for a DOT double-quoted string: quotes and backslashes
/// escaped, CR and LF as the label line break `\n`, other control bytes as
/// the visible text `\xHH`. graphToDot and planToDot both use it.
std::string dotEscape(llvm::StringRef S);
/// A double as the shortest C-locale literal that round-trips.
std::string formatDouble(double V);

} // namespace jitfuse
