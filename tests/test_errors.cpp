//===- tests/test_errors.cpp - user errors vs internal errors -------------===//
//
// jitfuse::Error is the caller's mistake; jitfuse::InternalError a broken
// invariant inside jitfuse (support/Error.h). The two must not be confused:
// catching Error around user input must not swallow a jitfuse bug.
//
//===----------------------------------------------------------------------===//
#include "compiler/Fusion.h"
#include "compiler/Partition.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <type_traits>

using namespace jitfuse;
using Catch::Contains;

static_assert(!std::is_base_of_v<Error, InternalError>,
              "catch (Error &) must not catch jitfuse's own bugs");
static_assert(!std::is_base_of_v<InternalError, Error>);

TEST_CASE("A broken partition is an InternalError, not a user Error", "[errors]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  Value Y = exp(X);
  G.output("y", Y * 2.0);
  Partition P = fuseGraph(G);
  REQUIRE_NOTHROW(verifyPartition(G, P));

  // What a buggy pass could produce: a live node in no cluster.
  Partition Lost = P;
  Lost.Clusters[0].Nodes.pop_back();
  CHECK_THROWS_AS(verifyPartition(G, Lost), InternalError);
  CHECK_THROWS_WITH(verifyPartition(G, Lost),
                    Contains("jitfuse internal error at") && Contains("Partition.cpp") &&
                        Contains("is in 0 clusters") && Contains("please report"));
  bool CaughtAsUserError = false;
  try {
    verifyPartition(G, Lost);
  } catch (const Error &) {
    CaughtAsUserError = true;
  } catch (const InternalError &) {
  }
  CHECK_FALSE(CaughtAsUserError);
}

TEST_CASE("A user's mistake is an Error naming the node", "[errors]") {
  Graph G;
  Value A = G.input("a", f32, {4});
  Value B = G.input("b", f32, {5});
  CHECK_THROWS_AS(A + B, Error);
}

TEST_CASE("JITFUSE_CHECK throws only when its condition fails", "[errors]") {
  auto Check = [](bool Cond) { JITFUSE_CHECK(Cond, "the test's invariant"); };
  CHECK_NOTHROW(Check(true));
  CHECK_THROWS_WITH(Check(false), Contains("check 'Cond' failed: the test's invariant"));
}
