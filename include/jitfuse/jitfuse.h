//===- include/jitfuse/jitfuse.h - the public API, one include --*- C++ -*-===//
//
// Installed as <prefix>/include/jitfuse/jitfuse.h, so a consumer of the CMake
// package writes `#include <jitfuse/jitfuse.h>`, in the tree and installed
// alike. The folder headers it pulls in stay reachable as "driver/Compiler.h"
// etc. Errors are jitfuse::Error (support/Error.h). Nothing inside jitfuse
// includes it: it sits above every layer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "driver/Compiler.h"
#include "exec/HostRun.h"
#include "exec/Roofline.h"
#include "ir/Graph.h"
#include "ir/NN.h"
#include "ir/Printer.h"
#include "support/Error.h"
