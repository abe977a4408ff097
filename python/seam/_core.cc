// seam._core: Seam's C++ for Python, the compiler at the top level and the
// pass-ordering gym in seam._core.gym.
#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "Seam's compiler and pass-ordering gym (C++ core)";
  seam::python::BindCompiler(m);
  nanobind::module_ gym = m.def_submodule("gym", "Seam's pass-ordering gym (C++ core)");
  seam::python::BindGym(gym);
  // Importable by its dotted name too (`from seam._core.gym import ...`).
  nanobind::module_::import_("sys").attr("modules")["seam._core.gym"] = gym;
}
