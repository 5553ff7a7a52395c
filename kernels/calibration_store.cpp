#include "kernels/calibration_store.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "base/util/data_dir.hpp"

namespace ks::kernels {

std::string tier_model_path(Tier tier, const std::string& gpu, const std::string& file) {
  if (!file.empty()) return file;
  const std::string dir = data_dir() + "/calibration/";
  if (tier == Tier::Target) return dir + "target_" + gpu + ".yaml";
  const std::string without = dir + "cross_gen_without_" + gpu + ".yaml";
  return std::filesystem::exists(without) ? without : dir + "cross_gen.yaml";
}

std::shared_ptr<const EfficiencyModel> tier_model(Tier tier, const std::string& gpu, const std::string& file) {
  if (tier == Tier::Roofline) throw std::logic_error("the roofline tier has no efficiency model");
  const std::string path = tier_model_path(tier, gpu, file);
  static std::map<std::string, std::shared_ptr<const EfficiencyModel>> cache;
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  if (!std::filesystem::exists(path)) {
    if (tier == Tier::Target && file.empty())
      throw std::runtime_error("no target-tier calibration for GPU '" + gpu + "' (looked for " + path +
                               "): measure it (scripts/microbench/) and run `kernelsight calibrate`, "
                               "then pass the file as calibration, or use tier cross-gen");
    throw std::runtime_error(path + ": calibration file not found");
  }
  auto model = std::make_shared<const EfficiencyModel>(EfficiencyModel::load(path));
  cache.emplace(path, model);
  return model;
}

}  // namespace ks::kernels
