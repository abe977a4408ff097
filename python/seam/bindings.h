// What the parts of seam._core share: absl errors as Python exceptions
// (ValueError for bad arguments and missing things, RuntimeError for the
// rest, carrying the status message), and each part's binding function.
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace seam::python {

namespace nb = nanobind;

[[noreturn]] inline void Throw(const absl::Status& status) {
  std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
      throw nb::value_error(message.c_str());
    default:
      throw std::runtime_error(message);
  }
}

inline void Check(const absl::Status& status) {
  if (!status.ok()) Throw(status);
}

template <typename T>
T Value(absl::StatusOr<T> value) {
  if (!value.ok()) Throw(value.status());
  return *std::move(value);
}

// The compiler (seam.compile's executables) and the pass-ordering gym.
void BindCompiler(nb::module_& m);
void BindGym(nb::module_& m);

}  // namespace seam::python
