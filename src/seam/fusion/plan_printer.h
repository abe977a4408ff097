// Fusion plans as text (for people and golden tests), JSON (for scripts:
// a top-level `kernels` array, library calls apart, totals) and Graphviz
// DOT (one cluster per kernel, edges coloured by stitching scheme).
#pragma once

#include <string>

#include "seam/fusion/fusion_plan.h"

namespace seam::fusion {

std::string PlanToText(const FusionPlan& plan);
std::string PlanToJson(const FusionPlan& plan);
std::string PlanToDot(const FusionPlan& plan);

}  // namespace seam::fusion
