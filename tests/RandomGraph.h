//===- tests/RandomGraph.h - random graph recipes ---------------*- C++ -*-===//
//
// Graph is not copyable, so a random graph is kept as a Recipe: a list of op
// records that builds a Graph through the public builder API. Recipes are
// reproducible from a seed, can be merged (to batch many small graphs into one
// compile), shrunk against a failing predicate, and a graph prints as C++
// builder code so a failure's minimal repro pastes into a test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "reference/Interpreter.h"

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace jitfuse::test {

enum class RKind : uint8_t {
  Input,
  Scalar,
  Constant,
  Unary,
  Cast,
  Binary, // includes comparisons (bool result, only fed to Where)
  Where,
  Fma,
  Reduce,
  Broadcast,
  Reshape,
  Slice,
  Concat,
  Permute, // A0 = a * 4 + b: swap axes a and b (each mod the rank)
};

struct RecipeOp {
  RKind K = RKind::Input;
  Op O = Op::Add;
  DType T = DType::F32;       // Input/Scalar/Constant/Cast
  std::vector<Dim> Dims;      // Input/Broadcast/Reshape
  std::vector<unsigned> Args; // indices of earlier ops
  int64_t A0 = 0, A1 = 0;     // Reduce scope; Slice [A0, A1)
  double F = 0;               // Constant value
  std::string Name;           // Input/Scalar
  std::vector<Dim> Strides;   // Input: declared strides (empty: contiguous)
};

struct Recipe {
  std::vector<RecipeOp> Ops;
  std::vector<std::pair<std::string, unsigned>> Outputs;
  std::map<std::string, int64_t> Dims;   // values of the dynamic dims
  std::map<std::string, double> Scalars; // values of the run-time scalars
  /// Outputs declared with strides, by output name. A named stride (of an
  /// input or output) starts with "ld": merging recipes renames it with
  /// the recipe's prefix.
  std::map<std::string, std::vector<Dim>> OutputStrides;
  uint64_t Seed = 0;
};

struct GenOptions {
  unsigned MinOps = 3, MaxOps = 14;
  /// Value of the dynamic dim "B"; < 0 picks one from the seed.
  int64_t BValue = -1;
  /// Largest last-axis length drawn.
  int64_t MaxRow = 1100;
  /// Draw the last axis from long rows instead (4095 ... 50257: rows past
  /// the register budget, so row kernels re-read them, keep them in shared
  /// memory or split them over a cluster); MaxRow does not apply.
  bool LongRows = false;
  /// A reduction over outer axes (a column reduction once lowered) now and
  /// then gets a sibling: the same axes reduced over the square of its
  /// operand, both outputs (BatchNorm's statistics; fusion puts the two in
  /// one column kernel, SiblingColumnReductions). Off: the seeds draw the
  /// recipes they drew before the option existed.
  bool SiblingColumns = false;
  /// The last axis a dynamic dim "H" bound to the drawn length (a row
  /// known only at run time: its row kernel takes the threads its launch
  /// picks, CompileOptions::RowThreadsAtLaunch). Off: the seeds draw the
  /// recipes they drew before the option existed.
  bool DynamicRow = false;
};

/// A random, numerically well-conditioned graph (values stay bounded, exp
/// only of bounded values, comparisons only of raw inputs). Same seed, same
/// recipe.
Recipe randomRecipe(uint64_t Seed, const GenOptions &Opts = {});

/// Builds the graph; throws jitfuse::Error when the recipe is invalid (an
/// argument index out of range, or anything the builder rejects).
Graph buildGraph(const Recipe &R);

/// Inputs as the GPU tier draws them for graph G built from R: R's dim and
/// scalar values, then randomTensor for each input in graph order from
/// Rng(Seed).
Bindings recipeBindings(const Graph &G, const Recipe &R, uint64_t Seed);

/// One recipe holding all of Rs side by side; names get a "g<k>_" prefix.
/// Dynamic dims with the same name must have the same value.
Recipe mergeRecipes(llvm::ArrayRef<Recipe> Rs);

/// Recipes a GPU random-graph batch merges (test_random_graphs.cpp).
inline constexpr unsigned GpuBatchSize = 20;
/// GPU batch \p Batch's members (merged with mergeRecipes): the recipes of
/// seeds FirstSeed .. FirstSeed + Count - 1, B cycling through 1, 3, 7, 33,
/// 130, 257 by batch, sibling column reductions on. The GPU tier runs such
/// batches and test_random_coverage.cpp plans them: one definition keeps
/// them alike.
std::vector<Recipe> gpuBatchRecipes(uint64_t FirstSeed, unsigned Batch,
                                    unsigned Count = GpuBatchSize);

/// Interprets arbitrary bytes as a recipe (for fuzzing); may be invalid.
Recipe recipeFromBytes(llvm::ArrayRef<uint8_t> Bytes);

/// Repeatedly drops outputs and replaces ops by one of their operands,
/// keeping every candidate that still builds and still satisfies Fails.
/// Fails(buildGraph(R)) must hold on entry.
Recipe shrinkRecipe(Recipe R, const std::function<bool(const Graph &)> &Fails);

/// The graph as C++ builder calls (assumes `using namespace jitfuse;` and a
/// `Graph g;`), e.g. `auto v3 = add(v1, v2);` and `g.output("y", v3);`.
std::string printAsCpp(const Graph &G);

/// The recipe's dims and scalar values as a one-line comment.
std::string describeBindings(const Recipe &R);

} // namespace jitfuse::test
