#include "kernels/calibration_store.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "base/util/data_dir.hpp"
#include "kernels/attention_backend.hpp"
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

namespace {
std::shared_ptr<const EfficiencyModel> load_cached(const std::string& path) {
  static std::map<std::string, std::shared_ptr<const EfficiencyModel>> cache;
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  auto model = std::make_shared<const EfficiencyModel>(EfficiencyModel::load(path));
  cache.emplace(path, model);
  return model;
}
}  // namespace

std::vector<std::string> available_attention_backends(const std::string& path, const EfficiencyModel& model) {
  std::vector<std::string> out;
  for (const std::string& b : attention_backend_names())
    if (std::filesystem::exists(attention_backend_path(path, b)) ||
        (model.attention_backends.size() == 1 && model.attention_backends.front() == b))
      out.push_back(b);
  return out;
}

std::shared_ptr<const EfficiencyModel> tier_model(Tier tier, const std::string& gpu, const std::string& file,
                                                  const std::string& engine, const std::string& backend) {
  if (tier == Tier::Roofline) throw std::logic_error("the roofline tier has no efficiency model");
  if (!backend.empty() && !is_attention_backend(backend)) {
    std::string known;
    for (const std::string& b : attention_backend_names()) known += (known.empty() ? "" : ", ") + b;
    throw AttentionBackendError("unknown attention backend '" + backend + "' (known: " + known + ")");
  }
  const std::string path = tier_model_path(tier, gpu, file, engine);
  if (!std::filesystem::exists(path)) {
    if (tier == Tier::Target && file.empty())
      throw std::runtime_error("no target-tier calibration for GPU '" + gpu + "' (looked for " + path +
                               "): measure it (scripts/microbench/) and run `kernelsight calibrate`, "
                               "then pass the file as calibration, or use tier cross-gen");
    throw std::runtime_error(path + ": calibration file not found");
  }
  std::shared_ptr<const EfficiencyModel> base = load_cached(path);
  const GpuSpec* spec = find_builtin_gpu(gpu);
  const std::string generation = spec != nullptr ? spec->generation : "";
  // Left empty: the target tier prices attention from the engine's default backend's own
  // measurements where it has a file; the cross-gen tier keeps the engine file's attention, pooled
  // over every backend and generation (a backend's own file is fitted on fewer GPUs).
  const std::string want = !backend.empty()           ? backend
                           : tier == Tier::Target     ? default_attention_backend(engine, generation)
                                                      : std::string();
  if (want.empty()) return base;
  static std::map<std::string, std::shared_ptr<const EfficiencyModel>> combined;
  const std::string key = path + "#" + want;
  if (auto it = combined.find(key); it != combined.end()) return it->second;
  const std::string own = attention_backend_path(path, want);
  if (std::filesystem::exists(own)) {
    auto model = std::make_shared<const EfficiencyModel>(base->with_attention_classes_of(*load_cached(own)));
    combined.emplace(key, model);
    return model;
  }
  // A file whose attention rows were all of this backend is its calibration; the engine's default
  // without a calibration of its own keeps the file's pooled attention.
  if (backend.empty() || (base->attention_backends.size() == 1 && base->attention_backends.front() == want))
    return base;
  std::string list;
  for (const std::string& b : available_attention_backends(path, *base)) list += (list.empty() ? "" : ", ") + b;
  throw AttentionBackendError(
      "attention backend '" + backend + "' has no " + std::string(tier_name(tier)) + "-tier calibration for " + gpu +
      (engine.empty() ? std::string(" (no kernel_engine set)") : " under " + engine) + " (looked for " + own +
      "); backends with data here: " +
      (list.empty() ? std::string("none (leave attention_backend empty for the calibration's pooled attention)")
                    : list));
}

}  // namespace ks::kernels
