#include "kernels/tiers.hpp"

#include <algorithm>
#include <filesystem>

#include "base/util/csv.hpp"
#include "base/util/data_dir.hpp"

namespace ks::kernels {

std::optional<Tier> parse_tier(std::string_view name) {
  if (name == "roofline") return Tier::Roofline;
  if (name == "cross-gen" || name == "cross_gen") return Tier::CrossGen;
  if (name == "target") return Tier::Target;
  return std::nullopt;
}

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::Roofline: return "roofline";
    case Tier::CrossGen: return "cross-gen";
    case Tier::Target: return "target";
  }
  return "?";
}

std::vector<Measurement> load_sweeps(const std::string& dir_in) {
  namespace fs = std::filesystem;
  const std::string dir = dir_in.empty() ? data_dir() + "/sweeps" : dir_in;
  if (!fs::is_directory(dir)) throw CsvError(dir + ": sweep folder not found (set KERNELSIGHT_DATA_DIR?)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Measurement> rows;
  for (const auto& f : files) {
    auto part = read_sweep(f.string());
    rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return rows;
}

EfficiencyModel fit_cross_gen(const std::vector<Measurement>& sweeps, const std::string& target_gpu) {
  std::vector<Measurement> others;
  for (const Measurement& m : sweeps)
    if (m.gpu != target_gpu) others.push_back(m);
  FitOptions options;
  options.transferable_elementwise = true;
  EfficiencyModel model = fit_efficiency(others, options);
  model.description = "cross-gen: fitted without measurements of " + target_gpu;
  return model;
}

EfficiencyModel fit_target(const std::vector<Measurement>& target_rows, const EfficiencyModel& prior) {
  FitOptions options;
  options.prior = &prior;
  options.residual_trees = true;
  options.select_residual = true;
  options.measured_families = true;
  options.rows_are_engine_source = true;
  EfficiencyModel model = fit_efficiency(target_rows, options);
  model.description = "target: fitted on a sweep of the target GPU, cross-gen model as prior";
  return model;
}

}  // namespace ks::kernels
