#include "kernels/calibration_store.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "base/util/data_dir.hpp"
#include "kernels/gpu_catalog.hpp"

namespace ks::kernels {

std::string tier_model_path(Tier tier, const std::string& gpu, const std::string& file, const std::string& engine) {
  if (!file.empty()) return file;
  namespace fs = std::filesystem;
  const std::string dir = data_dir() + "/calibration/";
  // The engine's own file first, then the engine-neutral one.
  auto first_of = [&](const std::string& stem) -> std::string {
    if (!engine.empty() && fs::exists(dir + stem + "." + engine + ".yaml")) return dir + stem + "." + engine + ".yaml";
    return dir + stem + ".yaml";
  };
  if (tier == Tier::Target) return first_of("target_" + gpu);
  const GpuSpec* spec = find_builtin_gpu(gpu);
  const std::string generation = spec != nullptr && !spec->generation.empty() ? spec->generation : gpu;
  const std::string without = first_of("cross_gen_without_" + generation);
  return fs::exists(without) ? without : first_of("cross_gen");
}

std::shared_ptr<const EfficiencyModel> tier_model(Tier tier, const std::string& gpu, const std::string& file,
                                                  const std::string& engine) {
  if (tier == Tier::Roofline) throw std::logic_error("the roofline tier has no efficiency model");
  const std::string path = tier_model_path(tier, gpu, file, engine);
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
