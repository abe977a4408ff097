// The `seam` subcommands. Each registers its flags on a CLI11 subcommand and
// runs when that subcommand is chosen, returning the process exit code.
#pragma once

#include <functional>

#include "CLI/CLI.hpp"

namespace seam {

// Adds `seam opt` to `app`; the returned function runs it.
std::function<int()> AddOptCommand(CLI::App& app);
// Adds `seam run`.
std::function<int()> AddRunCommand(CLI::App& app);
// Adds `seam passes`.
std::function<int()> AddPassesCommand(CLI::App& app);
// Adds `seam plan`.
std::function<int()> AddPlanCommand(CLI::App& app);
// Adds `seam bench`.
std::function<int()> AddBenchCommand(CLI::App& app);
// Adds `seam compile`.
std::function<int()> AddCompileCommand(CLI::App& app);
// Adds `seam gym`.
std::function<int()> AddGymCommand(CLI::App& app);

// Options every subcommand reads alike. A seed is a non-negative integer
// (CLI11 would wrap -1 round to 2^64 - 1).
CLI::Validator NonNegativeInteger();

// A duration: a finite number of seconds, 0 or more (CLI11's
// NonNegativeNumber lets NaN through, and prints its 309-digit bound for inf).
CLI::Validator Seconds();

}  // namespace seam
