// Fuzz target: the Hugging Face config.json reader, and what the simulator computes from an
// accepted model (sizes, one decode step). Bad input must end in SpecError / invalid_argument.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/hf_config.hpp"
#include "kernels/step_decomposer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ks::kernels::ModelConfig m = ks::kernels::parse_hf_config(text, "fuzz.json", "fuzz");
    (void)m.weight_bytes(ks::kernels::DType::BF16);
    (void)m.kv_bytes_per_token(ks::kernels::DType::BF16);
    ks::kernels::StepBatch batch;
    batch.decode_contexts.push_back(16);
    batch.prefills.push_back({8, 0, true});
    (void)ks::kernels::decompose_step(m, batch, ks::kernels::DType::BF16, ks::kernels::DType::BF16, {1, 1});
  } catch (const std::invalid_argument&) {  // SpecError, and shapes decompose_step rejects
  }
  return 0;
}
