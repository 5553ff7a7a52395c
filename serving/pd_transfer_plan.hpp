#pragma once
// Which tensor-parallel rank of a prefill replica sends which part of a request's KV cache to
// which rank of a decode replica (prefill/decode disaggregation). Pure: no SystemC.
//
// KV heads are split over TP ranks as vLLM shards them: with H KV heads and tp ranks, rank r holds
// heads [r·H/tp, (r+1)·H/tp) when H >= tp, else the single head floor(r·H/tp) (replicated tp/H
// times). Every decode rank receives each head it holds from one prefill rank holding it (among
// replicas of a head, the one whose replica index matches the decode rank's, so the copies spread
// over the senders). With MLA (DeepSeek-V2/V3) every rank keeps the whole latent cache: decode
// rank d receives all of it from prefill rank d mod tp_prefill. Prefill tp and decode tp may
// differ (vLLM's NixlConnector and SGLang's heterogeneous-TP transfer do this).
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"

namespace ks::serving {

struct KvRankShare {
  int src_rank = 0;  // prefill TP rank
  int dst_rank = 0;  // decode TP rank
  double bytes_per_token = 0;  // all layers
};

// Throws std::invalid_argument when a tp does not divide the KV heads or the other way round
// (the model could not be split so).
std::vector<KvRankShare> kv_rank_shares(const kernels::ModelConfig& model, kernels::DType kv_dtype, int prefill_tp,
                                        int decode_tp);

}  // namespace ks::serving
