#pragma once
// How many thread-block clusters of 2 and of 4 CTAs can be resident at once when each CTA
// takes a whole SM (the persistent GEMMs' case). A cluster must fit in one GPC, and an H100's
// GPCs do not all hold a multiple of 4 SMs, so fewer than sm_count / 4 clusters of 4 fit; a
// persistent kernel launched with more cluster tiles than that runs a second round.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_cluster_slots(int compute_capability);

}  // namespace overlap::gpu
