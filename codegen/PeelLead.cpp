//===- codegen/PeelLead.cpp - the tensors a peeled kernel aligns to -------===//
//
// A peeled variant aligns its chunks to one tensor at run time (its phase,
// jf_off) and checks every other tensor's alignment per chunk. The kernel
// text (KernelWriter::leadPhase), the scheduler (which decides whether a
// second, output-led variant is worth compiling) and the launch (which picks
// between the two from the pointers) must agree on which tensors those are,
// so the choice lives here, once.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"

namespace jitfuse::codegen {

PeelLeads peelLeads(const Graph &G, const KernelPlan &P) {
  // A tensor over the whole domain; an input that relabels the domain (read
  // at the domain's linear index) serves when none has the domain's own
  // shape. A strided tensor's rows start at their own phases: never a lead.
  auto Whole = [&](NodeId N, bool Relabel) {
    const Node &Nd = G.node(N);
    if (!G.stridesOf(N).empty())
      return false;
    return llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain) ||
           (Relabel && !P.Flat && sameNumel(Nd.Dims, P.Domain)) ||
           (P.Flat && staticNumel(Nd.Dims) != std::optional<int64_t>(1));
  };
  PeelLeads L;
  for (bool Relabel : {false, true}) {
    for (size_t I = 0; I < P.Inputs.size() && L.Input < 0; ++I)
      if (Whole(P.Inputs[I], Relabel))
        L.Input = static_cast<int>(I);
  }
  for (size_t O = 0; O < P.Outputs.size() && L.Output < 0; ++O)
    if (Whole(P.Outputs[O], true))
      L.Output = static_cast<int>(O);
  return L;
}

bool sameRowVector(const Graph &G, const KernelPlan &P, NodeId N) {
  const Node &Nd = G.node(N);
  PeelLeads L = peelLeads(G, P);
  if (L.Input < 0 || P.Domain.size() < 2 || Nd.Dims.size() != 1 || !G.stridesOf(N).empty() ||
      dtypeBytes(Nd.Type) != dtypeBytes(G.node(P.Inputs[L.Input]).Type))
    return false;
  const Dim &R = P.Domain.back();
  return Nd.Dims[0] == R && !R.isDynamic() && R.Size % P.Vecs.back() == 0;
}

SamePhaseTensors samePhaseTensors(const Graph &G, const KernelPlan &P) {
  SamePhaseTensors S;
  PeelLeads L = peelLeads(G, P);
  if (!P.SamePhasePeeled || L.Input < 0)
    return S;
  const DType LeadType = G.node(P.Inputs[L.Input]).Type;
  auto Same = [&](NodeId N) {
    const Node &Nd = G.node(N);
    return G.stridesOf(N).empty() && dtypeBytes(Nd.Type) == dtypeBytes(LeadType) &&
           llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain);
  };
  for (size_t I = 0; I < P.Inputs.size(); ++I)
    if (static_cast<int>(I) != L.Input && (Same(P.Inputs[I]) || sameRowVector(G, P, P.Inputs[I])))
      S.Inputs.push_back(static_cast<int>(I));
  for (size_t O = 0; O < P.Outputs.size(); ++O)
    if (Same(P.Outputs[O]))
      S.Outputs.push_back(static_cast<int>(O));
  return S;
}

} // namespace jitfuse::codegen
