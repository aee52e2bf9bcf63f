#pragma once
// Registers per thread each of our kernel instantiations compiled to, as tools/kernel_registers.py
// reads them from the cubin (generated tables in sim/models/generated/, checked against a fresh
// compile by a CPU test): with the CTA's threads and shared memory they set how many CTAs share
// an SM, which a kernel's launch bounds only cap from above.
#include <span>
#include <string_view>

namespace overlap::sim {

struct KernelRegisters {
  std::string_view function;  // mangled kernel name
  int registers;
};

// The registers of the one function whose mangled name contains `part`; 0 where the table has
// none (a configuration our kernels do not compile).
int compiled_registers(std::span<const KernelRegisters> table, std::string_view part);

}  // namespace overlap::sim
