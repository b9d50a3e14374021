//===- examples/bias_grad.cpp - the bias gradient, a column reduction -----===//
//
// Prints the graph (built by examples/ExampleGraphs.cpp) and its fused plan,
// compiles it fused and unfused, and on a GPU runs both on random inputs and
// checks every output against the fp64 reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "examples/ExampleRunner.h"

int main() { return jitfuse::examples::exampleMain("bias_grad"); }
