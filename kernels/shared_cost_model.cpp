#include "kernels/shared_cost_model.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace ks::kernels {

std::shared_ptr<const KernelCostModel> shared_cost_model(KernelCostModel model) {
  static std::mutex mutex;
  static std::vector<std::weak_ptr<const KernelCostModel>> live;
  const std::lock_guard<std::mutex> lock(mutex);
  live.erase(std::remove_if(live.begin(), live.end(), [](const auto& w) { return w.expired(); }), live.end());
  for (const auto& w : live)
    if (auto m = w.lock(); m && m->prices_like(model)) return m;
  auto shared = std::make_shared<const KernelCostModel>(std::move(model));
  live.push_back(shared);
  return shared;
}

}  // namespace ks::kernels
