// seam_hlo_mutate: writes mutants of HLO modules for a mutation campaign
// (scripts/mutation_campaign.py), each one to three structure-aware or
// byte mutations of a module picked from the inputs.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "hlo_mutator.h"
#include "seam/text/parser.h"

int main(int argc, char** argv) {
  CLI::App app{"Writes mutants of HLO modules: <out>/<n>.<mutations>.<module>.hlo"};
  uint64_t seed = 1;
  int count = 1000;
  std::string out;
  std::vector<std::string> inputs;
  app.add_option("--seed", seed, "seed of the mutations")->capture_default_str();
  app.add_option("--count", count, "how many mutants")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--out", out, "directory for the mutants")->required();
  app.add_option("inputs", inputs, "HLO files to mutate")->required()->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);

  // Each valid module of the inputs (golden files hold several, some of
  // them invalid on purpose): mutants of valid modules reach furthest.
  std::vector<std::pair<std::string, std::string>> modules;  // (stem, text)
  for (const std::string& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream read;
    read << in.rdbuf();
    const std::string text = read.str();
    const std::string stem = std::filesystem::path(path).stem().string();
    for (const auto& [begin, end] : seam::SplitModuleRanges(text)) {
      const std::string module = text.substr(begin, end - begin);
      if (seam::ParseHloModule(module, path).ok()) modules.push_back({stem, module});
    }
  }
  if (modules.empty()) {
    std::cerr << "seam_hlo_mutate: no valid module in the inputs\n";
    return 1;
  }
  std::cout << "seam_hlo_mutate: " << modules.size() << " valid modules in " << inputs.size()
            << " files\n";
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    std::cerr << "seam_hlo_mutate: cannot create " << out << ": " << error.message() << "\n";
    return 1;
  }
  std::mt19937_64 rng(seed);
  for (int n = 0; n < count; ++n) {
    const auto& [stem, text] = modules[rng() % modules.size()];
    std::string mutant = text, kinds;
    for (int m = 0, mutations = 1 + static_cast<int>(rng() % 3); m < mutations; ++m) {
      const auto kind = static_cast<seam::fuzz::Mutation>(rng() % seam::fuzz::kMutationCount);
      mutant = seam::fuzz::Mutate(std::move(mutant), kind, rng);
      absl::StrAppend(&kinds, m ? "+" : "", seam::fuzz::MutationName(kind));
    }
    const std::string path = absl::StrCat(out, "/", n, ".", kinds, ".", stem, ".hlo");
    std::ofstream file(path, std::ios::binary);
    file << mutant;
    if (!file) {
      std::cerr << "seam_hlo_mutate: cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}
