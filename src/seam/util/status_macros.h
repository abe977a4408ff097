// Small helpers for absl::Status plumbing. Debian's absl ships no public
// ASSIGN_OR_RETURN, so Seam keeps its own.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SEAM_CONCAT_INNER(a, b) a##b
#define SEAM_CONCAT(a, b) SEAM_CONCAT_INNER(a, b)

#define SEAM_RETURN_IF_ERROR(expr)                \
  do {                                            \
    ::absl::Status seam_status_ = (expr);         \
    if (!seam_status_.ok()) return seam_status_;  \
  } while (0)

#define SEAM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

// SEAM_ASSIGN_OR_RETURN(auto x, MaybeX()); returns the error if any.
#define SEAM_ASSIGN_OR_RETURN(lhs, expr) \
  SEAM_ASSIGN_OR_RETURN_IMPL(SEAM_CONCAT(seam_statusor_, __LINE__), lhs, expr)

// Internal invariants only: never reachable from user input.
#define SEAM_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: internal error: check failed: %s\n",   \
                   __FILE__, __LINE__, #cond);                            \
      std::abort();                                                       \
    }                                                                     \
  } while (0)
