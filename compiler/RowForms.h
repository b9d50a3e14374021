//===- compiler/RowForms.h - a row kernel's forms for few rows -*- C++ -*-===//
#pragma once

#include "compiler/Schedule.h"

#include <functional>

namespace jitfuse {

/// Schedules the kernel's cluster again under other options.
using Rescheduler = std::function<KernelPlan(const ScheduleOptions &)>;

/// Gives row kernel \p P its few-rows form (a cluster of 8 blocks a row,
/// KernelPlan::FewRows), its wide form (1024 threads a row,
/// KernelPlan::WideRows) and its split's aligned variant
/// (KernelPlan::AlignedCluster) where they apply, each from \p Reschedule, and
/// adds to P's schedule text when the launch takes them.
void attachRowForms(const Graph &G, KernelPlan &P, const ScheduleOptions &Opts,
                    const Rescheduler &Reschedule);

} // namespace jitfuse
