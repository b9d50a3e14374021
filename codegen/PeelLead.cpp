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

SamePhaseTensors samePhaseTensors(const Graph &G, const KernelPlan &P) {
  SamePhaseTensors S;
  if (!P.SamePhasePeeled)
    return S;
  PeelLeads L = peelLeads(G, P);
  if (L.Input < 0)
    return S;
  const int64_t LeadBytes = dtypeBytes(G.node(P.Inputs[L.Input]).Type);
  // Contiguous, of the lead's element size, and of the domain's dims, or
  // (inputs) a row vector of a static row that is whole chunks, so that
  // every row's chunks sit at the same phase of it as of the lead (a
  // norm's weight).
  auto Same = [&](NodeId N, bool RowVector) {
    const Node &Nd = G.node(N);
    if (!G.stridesOf(N).empty() || dtypeBytes(Nd.Type) != LeadBytes)
      return false;
    if (llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain))
      return true;
    const Dim &R = P.Domain.back();
    return RowVector && P.Domain.size() >= 2 && Nd.Dims.size() == 1 && Nd.Dims[0] == R &&
           !R.isDynamic() && R.Size % P.Vecs.back() == 0;
  };
  for (size_t I = 0; I < P.Inputs.size(); ++I)
    if (static_cast<int>(I) != L.Input && Same(P.Inputs[I], true))
      S.Inputs.push_back(static_cast<int>(I));
  for (size_t O = 0; O < P.Outputs.size(); ++O)
    if (Same(P.Outputs[O], false))
      S.Outputs.push_back(static_cast<int>(O));
  return S;
}

} // namespace jitfuse::codegen
