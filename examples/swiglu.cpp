//===- examples/swiglu.cpp - silu(gate) * up from a merged projection -----===//
//
// Prints the graph (built by examples/ExampleGraphs.cpp) and its fused plan,
// compiles it fused and unfused, and on a GPU runs both on random inputs and
// checks every output against the fp64 reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "examples/ExampleRunner.h"

int main() { return jitfuse::examples::exampleMain("swiglu"); }
