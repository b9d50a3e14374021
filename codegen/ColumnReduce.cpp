//===- codegen/ColumnReduce.cpp - the column reduction kernel body --------===//
#include "codegen/ColumnReduce.h"

#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse::codegen {

void columnReduceBody(const Graph &G, const KernelPlan &P, Emitter &E) {
  JITFUSE_CHECK(P.Domain.size() == 2 && P.Outputs.size() == 1,
                "a column reduction reduces axis 0 of [R, C] to one output");
  JITFUSE_CHECK(P.ThreadsX == launch::ColumnThreads &&
                    P.RowsPerBlock == launch::ColumnRowThreads,
                "column reductions launch ColumnThreads x ColumnRowThreads");
  std::string IT = E.indexType();
  NodeId Red = P.Outputs[0];
  const Node &Nd = G.node(Red);
  const Node &Op = G.node(Nd.Operands[0]);
  std::string AT = computeType(Nd.Type);
  std::string Ident = reduceIdentity(Nd.Kind, Nd.Type);
  std::string F = reduceFunctor(Nd.Kind);
  int NX = P.ThreadsX, NY = P.RowsPerBlock;
  // One padding column keeps the partials of a row of threads in distinct
  // shared-memory banks.
  E.line(fmt::format("__shared__ {} jf_col[{}][{}];", AT, NY, NX + 1));
  E.line(fmt::format("const {} nrows = {};", IT, E.dimExpr(P.Domain[0])));
  E.line(fmt::format("const {} ncols = {};", IT, E.dimExpr(P.Domain[1])));
  E.line(fmt::format("const {0} col = ({0})blockIdx.x * {1} + threadIdx.x;", IT, NX));
  E.line(fmt::format("{} acc = {};", AT, Ident));
  E.open("if (col < ncols)");
  // Coordinates (c0, col) of the domain: the prologue's values per element.
  E.open(fmt::format("for ({0} c0 = ({0})threadIdx.y; c0 < nrows; c0 += {1})", IT, NY));
  E.setVectorLoads(false);
  E.setLane(0);
  std::string V = promoteValue(Op.Type, Nd.Type, E.value(Nd.Operands[0], E.domainCoords()));
  E.line(fmt::format("acc = {}(acc, {});", F, V));
  E.setVectorLoads(true);
  E.close();
  E.close();
  E.line("jf_col[threadIdx.y][threadIdx.x] = acc;");
  E.line("__syncthreads();");
  E.open("if (threadIdx.y == 0 && col < ncols)");
  E.line(fmt::format("{} tot = jf_col[0][threadIdx.x];", AT));
  E.open(fmt::format("for (int i = 1; i < {}; ++i)", NY));
  E.line(fmt::format("tot = {}(tot, jf_col[i][threadIdx.x]);", F));
  E.close();
  if (Nd.Kind == Op::ReduceMean)
    E.line(fmt::format("tot = tot / ({})nrows;", AT));
  E.line(fmt::format("out_0[col] = {};", storeConvert(Nd.Type, "tot")));
  E.close();
}

} // namespace jitfuse::codegen
