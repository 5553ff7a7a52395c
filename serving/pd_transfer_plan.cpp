#include "serving/pd_transfer_plan.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace ks::serving {
namespace {

// The KV heads rank r of a tp-way group holds.
std::vector<int> heads_of(int heads, int tp, int r) {
  std::vector<int> out;
  if (heads >= tp) {
    for (int h = r * (heads / tp); h < (r + 1) * (heads / tp); ++h) out.push_back(h);
  } else {
    out.push_back(r * heads / tp);
  }
  return out;
}

void check_split(const kernels::ModelConfig& model, int tp, const char* side) {
  if (tp < 1) throw std::invalid_argument(std::string(side) + " tp must be >= 1");
  if (model.is_mla()) return;
  const int h = model.num_kv_heads;
  if (h % tp != 0 && tp % h != 0)
    throw std::invalid_argument(std::string(side) + " tp " + std::to_string(tp) + " and the " + std::to_string(h) +
                                " KV heads of model '" + model.name + "' must divide one another");
}

}  // namespace

std::vector<KvRankShare> kv_rank_shares(const kernels::ModelConfig& model, kernels::DType kv_dtype, int prefill_tp,
                                        int decode_tp) {
  check_split(model, prefill_tp, "prefill");
  check_split(model, decode_tp, "decode");
  const double total = model.kv_bytes_per_token(kv_dtype);
  std::vector<KvRankShare> out;
  if (model.is_mla()) {
    for (int d = 0; d < decode_tp; ++d) out.push_back({d % prefill_tp, d, total});
    return out;
  }
  const int heads = model.num_kv_heads;
  const double per_head = total / heads;
  std::map<std::pair<int, int>, double> pairs;  // (src, dst) -> bytes per token
  for (int d = 0; d < decode_tp; ++d)
    for (int h : heads_of(heads, decode_tp, d)) {
      int src = 0;
      if (heads >= prefill_tp) {
        src = h / (heads / prefill_tp);
      } else {
        const int copies = prefill_tp / heads;  // ranks holding head h: [h·copies, (h+1)·copies)
        src = h * copies + d % copies;
      }
      pairs[{src, d}] += per_head;
    }
  for (const auto& [pair, bytes] : pairs) out.push_back({pair.first, pair.second, bytes});
  return out;
}

}  // namespace ks::serving
