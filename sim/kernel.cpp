#include "sim/kernel.hpp"

namespace overlap::sim {

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::Copy: return "copy";
    case Unit::Tensor: return "tensor";
    case Unit::Fma: return "fma";
    case Unit::Sfu: return "sfu";
    case Unit::Smem: return "smem";
  }
  return "?";
}

std::int64_t regs_for_warps(int warps, int regs_per_thread) {
  const std::int64_t per_warp = (std::int64_t(regs_per_thread) * 32 + 255) / 256 * 256;
  return per_warp * warps;
}

Step run(Unit unit, double amount, std::string label) {
  Step s;
  s.kind = StepKind::Run;
  s.unit = unit;
  s.amount = amount;
  s.label = std::move(label);
  return s;
}
Step issue(Unit unit, double amount, int barrier, int offset, std::string label) {
  return issued(run(unit, amount, std::move(label)), barrier, offset);
}
Step issued(Step s, int barrier, int offset) {
  s.kind = StepKind::Issue;
  s.barrier = barrier;
  s.offset = offset;
  return s;
}
Step wait(int barrier, int offset, std::string label) {
  Step s;
  s.kind = StepKind::Wait;
  s.barrier = barrier;
  s.offset = offset;
  s.label = std::move(label);
  return s;
}
Step arrive(int barrier, int offset) {
  Step s;
  s.kind = StepKind::Arrive;
  s.barrier = barrier;
  s.offset = offset;
  s.label = "arrive";
  return s;
}
Step delay(double ns, std::string label) {
  Step s;
  s.kind = StepKind::Delay;
  s.amount = ns;
  s.label = std::move(label);
  return s;
}
Step load(double bytes, double hbm_fraction, CopyEngine engine, std::string label) {
  Step s = run(Unit::Copy, bytes, std::move(label));
  s.hbm_fraction = hbm_fraction;
  s.engine = engine;
  return s;
}
Step store(double bytes, CopyEngine engine, std::string label) {
  Step s = load(bytes, 1.0, engine, std::move(label));
  s.store = true;
  return s;
}
Step mma(double flops, Precision p, TensorPath path, std::string label) {
  Step s = run(Unit::Tensor, flops, std::move(label));
  s.precision = p;
  s.path = path;
  return s;
}

}  // namespace overlap::sim
