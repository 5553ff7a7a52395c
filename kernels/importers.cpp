#include "kernels/importers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>
#include <stdexcept>

#include "base/util/csv.hpp"

namespace ks::kernels {
namespace {

namespace fs = std::filesystem;
using i64 = std::int64_t;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The model folder of a Vidur file: .../<org>/<model>/mlp.csv -> "<model>" in lower case.
std::string model_of(const fs::path& file) { return lower(file.parent_path().filename().string()); }

// A whole number in [1, 2^31-1] (sizes, counts, TP degrees); 0 only where `allow_zero`.
i64 as_int(const CsvTable& t, std::size_t row, const char* column, bool allow_zero = false) {
  const double v = t.required_number(row, column);
  if (v != std::floor(v) || v < (allow_zero ? 0 : 1) || v > 2147483647.0)
    t.fail(row, column, std::string("expected a whole number from ") + (allow_zero ? "0" : "1") + " to 2^31-1, got '" +
                            t.cell(row, column) + "'");
  return static_cast<i64>(v);
}

// A kernel built from a row, or a CsvError naming the row.
Kernel row_kernel(const CsvTable& t, std::size_t row, const KernelShape& shape) {
  try {
    return build_kernel(shape);
  } catch (const std::invalid_argument& e) {
    t.fail(row, "op", e.what());
  }
}

void add(std::vector<Measurement>& out, const std::string& gpu, const std::string& model, const char* label,
         const KernelShape& shape, const CsvTable& t, std::size_t row) {
  const std::string column = std::string("time_stats.") + label + ".median";
  if (!t.has_column(column)) return;
  const auto ms = t.number(row, column);
  if (!ms || *ms <= 0) return;  // not measured in this row
  Measurement m;
  m.gpu = gpu;
  m.source = "vidur-fp16";
  m.model = model;
  m.label = label;
  m.shape = shape;
  m.kernel = row_kernel(t, row, shape);
  m.seconds = *ms * 1e-3;
  out.push_back(std::move(m));
}

void import_mlp(const fs::path& file, const std::string& gpu, std::vector<Measurement>& out) {
  const CsvTable t = CsvTable::read_file(file.string());
  const std::string model = model_of(file);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const i64 heads = as_int(t, r, "n_head"), kv = as_int(t, r, "n_kv_head"), hidden = as_int(t, r, "n_embd");
    const i64 inter = as_int(t, r, "n_expanded_embd"), tokens = as_int(t, r, "num_tokens");
    const i64 tp = as_int(t, r, "num_tensor_parallel_workers");
    const bool gated = t.cell(r, "use_gated_mlp") == "True" || t.cell(r, "use_gated_mlp") == "true" ||
                       t.cell(r, "use_gated_mlp") == "1";
    if (heads % tp || inter % tp || hidden % heads) t.fail(r, "num_tensor_parallel_workers", "shape not divisible by TP");
    const i64 head_dim = hidden / heads, q_heads = heads / tp, kv_heads = kv >= tp ? kv / tp : 1;

    auto gemm = [&](i64 n, i64 k) {
      KernelShape s;
      s.op = "gemm";
      s.dtype = DType::FP16;
      s.m = tokens, s.n = n, s.k = k;
      return s;
    };
    auto rows = [&](const char* op, i64 width) {
      KernelShape s;
      s.op = op;
      s.dtype = DType::FP16;
      s.tokens = tokens, s.hidden = width;
      return s;
    };
    add(out, gpu, model, "attn_pre_proj", gemm((q_heads + 2 * kv_heads) * head_dim, hidden), t, r);
    add(out, gpu, model, "attn_post_proj", gemm(hidden, q_heads * head_dim), t, r);
    add(out, gpu, model, "mlp_up_proj", gemm((gated ? 2 : 1) * inter / tp, hidden), t, r);
    add(out, gpu, model, "mlp_down_proj", gemm(hidden, inter / tp), t, r);
    add(out, gpu, model, "mlp_act", rows(gated ? "silu_mul" : "gelu", inter / tp), t, r);
    const char* norm = gated ? "rmsnorm" : "layernorm";
    add(out, gpu, model, "input_layernorm", rows(norm, hidden), t, r);
    add(out, gpu, model, "post_attention_layernorm", rows(norm, hidden), t, r);
    add(out, gpu, model, "add", rows("add", hidden), t, r);
    add(out, gpu, model, "emb", rows("embedding", hidden), t, r);
    KernelShape rope;
    rope.op = "rope";
    rope.dtype = DType::FP16;
    rope.tokens = tokens, rope.heads = q_heads, rope.kv_heads = kv_heads, rope.head_dim = head_dim;
    add(out, gpu, model, "attn_rope", rope, t, r);
  }
}

void import_attention(const fs::path& file, const std::string& gpu, std::vector<Measurement>& out) {
  const CsvTable t = CsvTable::read_file(file.string());
  const std::string model = model_of(file);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const i64 hidden = as_int(t, r, "n_embd"), heads = as_int(t, r, "n_q_head"), kv = as_int(t, r, "n_kv_head");
    const i64 tp = as_int(t, r, "num_tensor_parallel_workers");
    KernelShape s;
    s.dtype = DType::FP16;
    s.heads = heads / tp;
    s.kv_heads = kv >= tp ? kv / tp : 1;
    s.head_dim = hidden / heads;
    s.batch = as_int(t, r, "batch_size");
    const i64 cached = as_int(t, r, "kv_cache_size", true);
    const bool prefill = t.cell(r, "is_prefill") == "True";
    if (prefill) {
      s.op = "attention_prefill";
      s.q_len = as_int(t, r, "prefill_chunk_size");
      s.kv_len = cached + s.q_len;
      add(out, gpu, model, "attn_prefill", s, t, r);
    } else {
      s.op = "attention_decode";
      s.kv_len = std::max<i64>(cached, 1);
      add(out, gpu, model, "attn_decode", s, t, r);
    }
  }
}

}  // namespace

std::vector<Measurement> import_vidur(const std::string& dir, const std::string& gpu) {
  if (!fs::is_directory(dir)) throw CsvError(dir + ": not a directory");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".csv") files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // directory order is not stable across file systems
  std::vector<Measurement> out;
  for (const auto& f : files) {
    const std::string name = f.filename().string();
    if (name == "mlp.csv")
      import_mlp(f, gpu, out);
    else if (name.rfind("attention", 0) == 0)
      import_attention(f, gpu, out);
  }
  if (out.empty()) throw CsvError(dir + ": no Vidur mlp.csv or attention*.csv with measurements found");
  return out;
}

std::vector<Measurement> import_gemm_table(const std::string& path, const std::string& source) {
  return import_gemm_rows(CsvTable::read_file(path), source);
}

std::vector<Measurement> import_gemm_rows(const CsvTable& t, const std::string& source) {
  std::vector<Measurement> out;
  std::set<std::tuple<std::string, DType, i64, i64, i64, i64>> seen;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    std::string gpu = t.cell(r, "gpu");
    gpu = lower(gpu.substr(0, gpu.find(' ')));
    const std::string dt = t.cell(r, "dtype");
    const std::string in = dt.substr(0, dt.find('x'));
    DType dtype;
    if (in == "bf16") dtype = DType::BF16;
    else if (in == "f16") dtype = DType::FP16;
    else if (in.rfind("f8", 0) == 0) dtype = DType::FP8;
    else continue;  // f32 may run on TF32 tensor cores or not: its peak is ambiguous
    // One row per (shape, input dtype): the first output variant stands for the others.
    KernelShape s;
    s.op = "gemm";
    s.dtype = dtype;
    s.batch = as_int(t, r, "b");
    s.m = as_int(t, r, "m"), s.n = as_int(t, r, "n"), s.k = as_int(t, r, "k");
    if (!seen.insert({gpu, dtype, s.batch, s.m, s.n, s.k}).second) continue;
    Measurement m;
    m.gpu = gpu;
    m.source = source + "-" + std::string(dtype_name(dtype));
    m.label = dt;
    m.shape = s;
    m.kernel = row_kernel(t, r, s);
    m.seconds = t.required_number(r, "time_us") * 1e-6;
    if (!(m.seconds > 0)) t.fail(r, "time_us", "expected a positive time");
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ks::kernels
