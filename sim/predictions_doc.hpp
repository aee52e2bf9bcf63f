#pragma once
// docs/predictions.md: the pre-registered predictions for every SPEC hypothesis on T4, A100,
// H100 and B200 at the reference shapes, written before the kernels are measured.
#include <string>

namespace overlap::sim {

std::string predictions_markdown();

}  // namespace overlap::sim
