#include "kernels/sweep.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "base/util/csv.hpp"
#include "base/util/rng.hpp"

namespace ks::kernels {
namespace {

const char* kHeader = "gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us";
// Written only when some row sets one of them (old files keep their exact format).
const char* kOptionalHeader = ",framework,version,kernel_source,kv_dtype";

std::int64_t int_cell(const CsvTable& t, std::size_t row, const char* column, std::int64_t def) {
  if (!t.has_column(column)) return def;
  const auto v = t.number(row, column);
  if (!v) return def;
  // Up to 2^31-1: beyond any kernel dimension, and products of two dimensions stay exact in int64.
  if (*v != std::floor(*v) || *v < 0 || *v > 2147483647.0)
    t.fail(row, column, "expected a non-negative integer up to 2^31-1, got '" + t.cell(row, column) + "'");
  return static_cast<std::int64_t>(*v);
}

}  // namespace

KernelShape read_shape(const CsvTable& t, std::size_t r) {
  KernelShape shape;
  shape.op = t.cell(r, "op");
  const auto dtype = parse_dtype(t.cell(r, "dtype"));
  if (!dtype) t.fail(r, "dtype", "expected one of fp32, fp16, bf16, fp8, int8, int4, got '" + t.cell(r, "dtype") + "'");
  shape.dtype = *dtype;
  shape.m = int_cell(t, r, "m", 0);
  shape.n = int_cell(t, r, "n", 0);
  shape.k = int_cell(t, r, "k", 0);
  shape.batch = int_cell(t, r, "batch", 1);
  shape.tokens = int_cell(t, r, "tokens", 0);
  shape.hidden = int_cell(t, r, "hidden", 0);
  shape.heads = int_cell(t, r, "heads", 0);
  shape.kv_heads = int_cell(t, r, "kv_heads", 0);
  shape.head_dim = int_cell(t, r, "head_dim", 0);
  shape.q_len = int_cell(t, r, "q_len", 0);
  shape.kv_len = int_cell(t, r, "kv_len", 0);
  const std::string kv = t.optional_cell(r, "kv_dtype");
  if (!kv.empty()) {
    const auto kv_dtype = parse_dtype(kv);
    if (!kv_dtype) t.fail(r, "kv_dtype", "expected blank or one of fp32, fp16, bf16, fp8, int8, int4, got '" + kv + "'");
    shape.kv_dtype = *kv_dtype;
  }
  return shape;
}

Kernel read_kernel(const CsvTable& t, std::size_t row, KernelShape* shape_out) {
  KernelShape shape = read_shape(t, row);
  try {
    Kernel k = build_kernel(shape);
    if (shape_out) *shape_out = shape;
    return k;
  } catch (const std::invalid_argument& e) {
    t.fail(row, "op", e.what());
  }
}

namespace {

std::vector<Measurement> from_table(const CsvTable& t) {
  std::vector<Measurement> out;
  out.reserve(t.rows());
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Measurement m;
    m.gpu = t.cell(r, "gpu");
    if (m.gpu.empty()) t.fail(r, "gpu", "expected a GPU name");
    m.source = t.optional_cell(r, "source");
    m.model = t.optional_cell(r, "model");
    m.label = t.optional_cell(r, "label");
    m.framework = t.optional_cell(r, "framework");
    m.version = t.optional_cell(r, "version");
    m.kernel_source = t.optional_cell(r, "kernel_source");
    m.shape = read_shape(t, r);
    m.kernel = read_kernel(t, r, nullptr);
    const double us = t.required_number(r, "time_us");
    if (!(us > 0)) t.fail(r, "time_us", "expected a positive time");
    m.seconds = us * 1e-6;
    out.push_back(std::move(m));
  }
  return out;
}

void put_int(std::ostringstream& os, std::int64_t v) {
  os << ',';
  if (v != 0) os << v;
}

}  // namespace

std::vector<Measurement> read_sweep(const std::string& path) { return from_table(CsvTable::read_file(path)); }

std::vector<Measurement> parse_sweep(const std::string& text, const std::string& origin) {
  return from_table(CsvTable::parse(text, origin));
}

std::string format_sweep(const std::vector<Measurement>& rows) {
  bool optional = false;
  for (const Measurement& m : rows)
    optional = optional || !m.framework.empty() || !m.version.empty() || !m.kernel_source.empty() ||
               m.shape.kv_dtype.has_value();
  std::ostringstream os;
  os << kHeader << (optional ? kOptionalHeader : "") << '\n';
  for (const Measurement& m : rows) {
    os << m.gpu << ',' << m.source << ',' << m.model << ',' << m.label << ',' << m.shape.op << ','
       << dtype_name(m.shape.dtype);
    put_int(os, m.shape.m);
    put_int(os, m.shape.n);
    put_int(os, m.shape.k);
    put_int(os, m.shape.batch);
    put_int(os, m.shape.tokens);
    put_int(os, m.shape.hidden);
    put_int(os, m.shape.heads);
    put_int(os, m.shape.kv_heads);
    put_int(os, m.shape.head_dim);
    put_int(os, m.shape.q_len);
    put_int(os, m.shape.kv_len);
    char buf[32];
    std::snprintf(buf, sizeof buf, ",%.6g", m.seconds * 1e6);
    os << buf;
    if (optional) {
      os << ',' << m.framework << ',' << m.version << ',' << m.kernel_source << ',';
      if (m.shape.kv_dtype) os << dtype_name(*m.shape.kv_dtype);
    }
    os << '\n';
  }
  return os.str();
}

std::string shape_family(const KernelShape& s) {
  std::ostringstream key;
  key << s.op << ' ' << dtype_name(s.dtype) << ' ' << s.n << ' ' << s.k << ' ' << (s.op == "gemm" ? s.batch : 0)
      << ' ' << s.hidden << ' ' << s.heads << ' ' << s.kv_heads << ' ' << s.head_dim;
  return key.str();
}

std::size_t family_fold(const KernelShape& shape, std::size_t folds) {
  return folds == 0 ? 0 : static_cast<std::size_t>(util::stable_hash(shape_family(shape)) % folds);
}

std::string kernel_group(OpKind op) {
  switch (op) {
    case OpKind::Gemm: return "gemm";
    case OpKind::AttentionPrefill:
    case OpKind::AttentionDecode: return "attention";
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::AllToAll: return "collective";
    default: return "elementwise";
  }
}

}  // namespace ks::kernels
