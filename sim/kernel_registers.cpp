#include "sim/kernel_registers.hpp"

namespace overlap::sim {

int compiled_registers(std::span<const KernelRegisters> table, std::string_view part) {
  for (const KernelRegisters& k : table)
    if (k.function.find(part) != std::string_view::npos) return k.registers;
  return 0;
}

}  // namespace overlap::sim
