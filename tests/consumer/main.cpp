// A consumer of the installed jitfuse package (see CMakeLists.txt here).
//
//   consumer          compiles y = relu(a + b) * s fused and unfused for
//                     sm_90 (NVRTC only, no GPU needed) and prints
//                     "unfused kernels: N" and "fused kernels: M"
//                     and "installed headers: K" (all of them compiled)
//   consumer readme   compiles the README's API example
#include <jitfuse/jitfuse.h>

#include <fmt/core.h>

#include <cstdio>
#include <cstring>
#include <exception>

namespace jf = jitfuse;

static void readmeExample() {
  // --- README example begin ---
  jf::Graph g;
  auto x   = g.input("x", jf::bf16, {"B", 4096});       // "B": bound at run time
  auto res = g.input("residual", jf::bf16, {"B", 4096});
  auto w   = g.input("weight", jf::bf16, {4096});
  auto eps = g.scalar("eps", jf::f32);                  // changing it never recompiles
  auto r = x + res;
  g.output("residual_out", r);
  g.output("y", jf::nn::rmsNorm(r, w, eps));

  jf::Compiler jit;                                     // cache settings from the env
  jf::CompileOptions opts;
  opts.ExpectKernels = 1;                               // else throws, showing the plan
  opts.Arch = "sm_90";                                  // NVRTC only: no GPU needed
  jf::Executable exe = jit.compile(g, opts);
  fmt::print("{}", exe.plan());                         // kernels, nodes, bytes, why
  // On a GPU, with device pointers in graph order:
  //   exe.run({dX, dRes, dW}, {dROut, dY}, /*Scalars=*/{1e-6}, /*Dims=*/{B}, stream);
  // --- README example end ---
  fmt::print("kernels: {}\n", exe.numKernels());
}

static unsigned kernelCount(bool Fuse) {
  jf::Graph G;
  jf::Value A = G.input("a", jf::f32, {1024});
  jf::Value B = G.input("b", jf::f32, {1024});
  jf::Value S = G.scalar("s", jf::f32);
  G.output("y", jf::relu(A + B) * S);
  jf::Compiler Jit;
  jf::CompileOptions Opts;
  Opts.Fuse = Fuse;
  Opts.Arch = "sm_90";
  jf::Executable Exe = Jit.compile(G, Opts);
  if (Exe.kernels().size() != Exe.numKernels())
    jf::fail("kernels() has {} entries but numKernels() is {}", Exe.kernels().size(),
             Exe.numKernels());
  return Exe.numKernels();
}

/// Defined in the generated all_headers.cpp (see CMakeLists.txt here).
int jitfuseInstalledHeaders();

int main(int Argc, char **Argv) try {
  if (Argc > 1 && std::strcmp(Argv[1], "readme") == 0) {
    readmeExample();
    return 0;
  }
  fmt::print("unfused kernels: {}\n", kernelCount(/*Fuse=*/false));
  fmt::print("fused kernels: {}\n", kernelCount(/*Fuse=*/true));
  fmt::print("installed headers: {}\n", jitfuseInstalledHeaders());
  return 0;
} catch (const std::exception &E) {
  std::fprintf(stderr, "consumer: %s\n", E.what());
  return 1;
}
