#include "kernels/moe_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "base/util/csv.hpp"
#include "base/util/rng.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/step_decomposer.hpp"

namespace ks::kernels {

std::vector<Kernel> moe_layer_kernels(const MoeLayerShape& s) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("MoE layer: " + what); };
  if (s.tokens < 1 || s.hidden < 1 || s.inter < 1) fail("tokens, hidden and inter must be >= 1");
  if (s.experts < 1 || s.top_k < 1 || s.top_k > s.experts) fail("top_k must be in [1, experts]");
  if (s.tp < 1 || s.ep < 1) fail("tp and ep must be >= 1");
  if (s.inter % s.tp != 0) fail("inter (" + std::to_string(s.inter) + ") is not divisible by tp (" + std::to_string(s.tp) + ")");
  if (s.ep > s.experts) fail("ep (" + std::to_string(s.ep) + ") exceeds the experts (" + std::to_string(s.experts) + ")");
  if (s.dtype != DType::BF16 && s.dtype != DType::FP16 && s.dtype != DType::FP8)
    fail("dtype must be bf16, fp16 or fp8, got " + std::string(dtype_name(s.dtype)));
  // A one-layer model whose every layer is MoE, the expert width already split tp ways; expert
  // parallelism runs over ep ranks (the decomposer's ep = tp). Attention and the rest are built
  // and dropped.
  const int ranks = s.ep;
  ModelConfig m;
  m.name = "moe_layer";
  m.num_layers = 1;
  m.hidden_size = static_cast<int>(s.hidden);
  m.num_heads = m.num_kv_heads = ranks;
  m.head_dim = 128;
  m.intermediate_size = static_cast<int>(s.inter / s.tp) * ranks;
  m.vocab_size = 256 * ranks;
  m.num_experts = s.experts;
  m.experts_per_token = s.top_k;
  m.moe_intermediate_size = static_cast<int>(s.inter / s.tp);
  ParallelConfig p;
  p.tp = p.ep = ranks;
  StepBatch batch;
  batch.prefills.push_back(PrefillChunk{s.tokens, 0, false});
  const StepKernels step = decompose_step(m, batch, s.dtype, DType::BF16, p);
  static const char* const kLayer[] = {"moe_topk", "experts_gate_up", "silu_mul", "experts_down", "moe_sum"};
  std::vector<Kernel> out;
  for (const Kernel& k : step.per_layer) {
    for (const char* name : kLayer)
      if (std::strcmp(k.name, name) == 0) out.push_back(k);
  }
  return out;
}

std::string moe_layer_family(const MoeLayerShape& s) {
  return std::to_string(s.hidden) + ' ' + std::to_string(s.inter) + ' ' + std::to_string(s.top_k) + ' ' +
         std::to_string(s.experts) + ' ' + std::to_string(s.tp) + ' ' + std::to_string(s.ep) + ' ' +
         std::string(dtype_name(s.dtype));
}

std::size_t moe_layer_fold(const MoeLayerShape& shape, std::size_t folds) {
  return folds == 0 ? 0 : static_cast<std::size_t>(util::stable_hash(moe_layer_family(shape)) % folds);
}

std::string moe_layer_class(const MoeLayerShape& shape) {
  return std::string(shape.ep > 1 ? "moe-ep " : "moe ") + std::string(dtype_name(shape.dtype));
}

namespace {

std::int64_t positive_int(const CsvTable& t, std::size_t r, const char* column) {
  const double v = t.required_number(r, column);
  if (v != std::floor(v) || v < 1 || v > 2147483647.0)
    t.fail(r, column, "expected a positive integer up to 2^31-1, got '" + t.cell(r, column) + "'");
  return static_cast<std::int64_t>(v);
}

std::vector<MoeLayerMeasurement> from_table(const CsvTable& t) {
  std::vector<MoeLayerMeasurement> out;
  out.reserve(t.rows());
  for (std::size_t r = 0; r < t.rows(); ++r) {
    MoeLayerMeasurement m;
    m.gpu = t.cell(r, "gpu");
    if (m.gpu.empty()) t.fail(r, "gpu", "expected a GPU name");
    m.source = t.optional_cell(r, "source");
    m.framework = t.optional_cell(r, "framework");
    m.version = t.optional_cell(r, "version");
    m.kernel_source = t.optional_cell(r, "kernel_source");
    const auto dtype = parse_dtype(t.cell(r, "dtype"));
    if (!dtype || (*dtype != DType::BF16 && *dtype != DType::FP16 && *dtype != DType::FP8))
      t.fail(r, "dtype", "expected bf16, fp16 or fp8, got '" + t.cell(r, "dtype") + "'");
    // A catalogue GPU without the dtype's peak cannot price the layer: said here, with the line.
    if (const GpuSpec* gpu = find_builtin_gpu(m.gpu); gpu != nullptr && !gpu->supports(*dtype))
      t.fail(r, "dtype", "GPU '" + m.gpu + "' has no " + std::string(dtype_name(*dtype)) + " peak in the catalogue");
    MoeLayerShape& s = m.shape;
    s.dtype = *dtype;
    s.tokens = positive_int(t, r, "tokens");
    s.hidden = positive_int(t, r, "hidden");
    s.inter = positive_int(t, r, "inter");
    s.top_k = static_cast<int>(positive_int(t, r, "top_k"));
    s.experts = static_cast<int>(positive_int(t, r, "experts"));
    s.tp = static_cast<int>(positive_int(t, r, "tp"));
    s.ep = static_cast<int>(positive_int(t, r, "ep"));
    if (s.top_k > s.experts) t.fail(r, "top_k", "expected at most experts (" + std::to_string(s.experts) + ")");
    if (s.ep > s.experts) t.fail(r, "ep", "expected at most experts (" + std::to_string(s.experts) + ")");
    if (s.inter % s.tp != 0) t.fail(r, "tp", "expected a divisor of inter (" + std::to_string(s.inter) + ")");
    try {
      m.kernels = moe_layer_kernels(s);
    } catch (const std::invalid_argument& e) {
      t.fail(r, "dtype", e.what());
    }
    const double us = t.required_number(r, "time_us");
    if (!(us > 0)) t.fail(r, "time_us", "expected a positive time");
    m.seconds = us * 1e-6;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::vector<MoeLayerMeasurement> read_moe_layers(const std::string& path) {
  return from_table(CsvTable::read_file(path));
}

std::vector<MoeLayerMeasurement> parse_moe_layers(const std::string& text, const std::string& origin) {
  return from_table(CsvTable::parse(text, origin));
}

}  // namespace ks::kernels
