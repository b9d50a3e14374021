//===- codegen/FullReduce.cpp - the full reduction's kernel body ---------===//
//
// KernelKind::FullReduce: every element of the domain into one value. Each
// block reduces its part (aligned chunks, the flat tail element by element,
// or a peeled variant's whole and partial chunks), storing the prologue's
// outputs on the way (FullReducePrologueOutputs); the launch's last block
// adds the blocks' partials in order and computes the epilogue
// (FullReduceEpilogue).
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"
#include "codegen/ColumnReduce.h"

#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse::codegen {

void KernelWriter::fullBody() {
  std::string IT = E.indexType();
  NodeId Red = reductionOf(G, P);
  const Node &Nd = G.node(Red);
  // The outputs: the reduction's result, the prologue's values stored as
  // the chunks go by (FullReducePrologueOutputs), and element-wise work on
  // the result computed by the last block (FullReduceEpilogue; the nodes
  // of the kernel that read the result).
  auto InKernel = [&](NodeId A) { return llvm::is_contained(P.Nodes, A); };
  std::vector<bool> Final(P.Outputs.size());
  bool Stores = false;
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    Final[O] = readsResult(G, P.Outputs[O], Red, InKernel);
    Stores |= !Final[O];
  }
  JITFUSE_CHECK(llvm::is_contained(Final, true), "a full reduction stores a result");
  StoreOnly.assign(P.Outputs.size(), true);
  for (size_t O = 0; O < P.Outputs.size(); ++O)
    StoreOnly[O] = !Final[O];
  const Node &Op = G.node(Nd.Operands[0]);
  std::string AT = computeType(Nd.Type);
  std::string Ident = reduceIdentity(Nd.Kind, Nd.Type);
  int NT = P.ThreadsX;
  E.line(fmt::format("__shared__ {} jf_smem[{}];", AT, NT / 32 + 1));
  E.line("__shared__ bool jf_last;");
  E.line(fmt::format("{} acc = {};", AT, Ident));
  std::string N = numelExpr();
  E.line(fmt::format("const {} n = {};", IT, N));
  auto Accumulate = [&](int) {
    std::string V = promoteValue(Op.Type, Nd.Type,
                                 E.value(Nd.Operands[0], E.domainCoords()));
    accumulate("acc", Nd.Kind, V);
  };
  std::string L = P.Domain.empty() ? "1" : E.dimExpr(P.Domain.back());
  leadPhase();
  if (P.Flat) {
    E.line(fmt::format("const {} nchunks = (n + {}{}) / {};", IT, Peel ? "jf_off + " : "",
                       Vec - 1, Vec));
  } else {
    E.line(Peel ? fmt::format("const {} cpr = ({} + {}) / {};", IT, L, 2 * Vec - 2, Vec)
                : fmt::format("const {} cpr = {} / {};", IT, L, Vec));
    E.line(fmt::format("const {} nchunks = ({})({}) * cpr;", IT, IT, rowsExpr()));
  }
  E.open(fmt::format("for ({0} chunk = ({0})blockIdx.x * {1} + threadIdx.x; "
                     "chunk < nchunks; chunk += ({0})gridDim.x * {1})",
                     IT, NT));
  // A chunk's values: accumulated, and the prologue's outputs stored at
  // \p Base (the chunk's first element).
  auto Chunk = [&](bool Vector, const std::string &Base) {
    lanes(Vector, Accumulate);
    if (Stores)
      storeOutputs(Vector, Base);
  };
  if (Peel && P.Flat) {
    E.line(fmt::format("[[maybe_unused]] const {} col = chunk * {} - jf_off;", IT, Vec));
    chunkLanes("n");
    wholeOrPartial([&] { Chunk(true, "col"); });
    E.setLaneGuard(false);
  } else if (Peel) {
    E.line(fmt::format("const {} row = chunk / cpr;", IT));
    E.line(fmt::format("const int jf_o = (int)((jf_off + row * {}) % {});", L, Vec));
    E.line(fmt::format("[[maybe_unused]] const {} col = (chunk - row * cpr) * {} - jf_o;", IT, Vec));
    E.open(fmt::format("if (col < {})", L));
    chunkLanes(L);
    outerCoords("row");
    wholeOrPartial([&] { Chunk(true, fmt::format("row * {} + col", L)); });
    E.setLaneGuard(false);
    E.close();
  } else if (P.Flat) {
    E.line(fmt::format("[[maybe_unused]] const {} col = chunk * {};", IT, Vec));
    if (Vec == 1) {
      Chunk(false, "col");
    } else {
      E.open(fmt::format("if (col + {} <= n)", Vec));
      Chunk(true, "col");
      E.close();
      E.open("else");
      if (Stores)
        tailElements([&] { Chunk(true, "col"); });
      else
        flatTail("n", Accumulate);
      E.close();
    }
  } else {
    E.line(fmt::format("const {} row = chunk / cpr;", IT));
    E.line(fmt::format("[[maybe_unused]] const {} col = (chunk - row * cpr) * {};", IT, Vec));
    outerCoords("row");
    Chunk(true, fmt::format("row * {} + col", L));
  }
  E.close();
  StoreOnly.clear();
  // Stage 2, deterministic: fixed per-block partials, summed in a fixed
  // order by the last block to finish.
  std::string F = reduceFunctor(Nd.Kind);
  E.line(fmt::format("acc = jf_block_reduce<{}>(acc, {}, {}, jf_smem);", NT, F, Ident));
  E.open("if (threadIdx.x == 0)");
  E.line("jf_partials[blockIdx.x] = acc;");
  E.line("__threadfence();");
  E.line("jf_last = atomicAdd(jf_counter, 1u) == gridDim.x - 1;");
  E.close();
  E.line("__syncthreads();");
  E.line("if (!jf_last) return;");
  E.line("__threadfence();");
  E.line(fmt::format("{} tot = {};", AT, Ident));
  E.open(fmt::format("for (unsigned i = threadIdx.x; i < gridDim.x; i += {})", NT));
  E.line(fmt::format("tot = {}(tot, ((volatile {}*)jf_partials)[i]);", F, AT));
  E.close();
  E.line(fmt::format("tot = jf_block_reduce<{}>(tot, {}, {}, jf_smem);", NT, F, Ident));
  E.open("if (threadIdx.x == 0)");
  if (Nd.Kind == Op::ReduceMean)
    E.line(fmt::format("tot = tot / ({})n;", AT));
  // The result, and the epilogue's outputs evaluated at their one element
  // (other one-element tensors loaded there).
  E.setReduced(Red, "tot");
  E.setVectorLoads(false);
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    if (!Final[O])
      continue;
    NodeId Out = P.Outputs[O];
    std::string V = Out == Red ? storeConvert(Nd.Type, "tot")
                               : storeConvert(G.node(Out).Type,
                                              E.value(Out, E.coordsOfIndex("0", G.node(Out).Dims)));
    E.line(fmt::format("out_{}[0] = {};", O, V));
  }
  E.setVectorLoads(true);
  E.line("*jf_counter = 0u; // ready for the next launch");
  E.close();
}

} // namespace jitfuse::codegen
