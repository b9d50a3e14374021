//===- support/jitfuse.h - the public API in one include --------*- C++ -*-===//
//
// Installed as <prefix>/include/jitfuse/jitfuse.h (and generated into
// <build>/include/jitfuse/jitfuse.h for in-tree users), so a consumer of the
// CMake package writes `#include <jitfuse/jitfuse.h>`. The folder headers it
// pulls in stay reachable as "compiler/Compiler.h" etc. Errors are
// jitfuse::Error (support/Error.h).
//
// It lives in support/ only because that is the one folder every target sees;
// nothing inside jitfuse includes it (that would invert the layering).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Compiler.h"
#include "compiler/HostRun.h"
#include "compiler/Roofline.h"
#include "ir/Graph.h"
#include "ir/NN.h"
#include "ir/Printer.h"
#include "support/Error.h"
