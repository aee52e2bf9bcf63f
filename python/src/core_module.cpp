// overlap._core: the model, the CPU references and the test vectors for Python. No CUDA here
// (overlap._cuda_ops holds the kernels), so `import overlap` works on any machine.
#include "bindings.hpp"
#include "core/error.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "overlap's C++ core: the model (sim/), the CPU references and test vectors (ref/)";
  // Every overlap::Error (bad shape, unknown name, malformed file, ...) arrives as
  // overlap.OverlapError with the C++ message unchanged; it is a ValueError.
  nb::exception<overlap::Error>(m, "OverlapError", PyExc_ValueError);
  overlap::python::bind_model(m);
  overlap::python::bind_vectors(m);
}
