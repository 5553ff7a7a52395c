#pragma once
// Kernel measurements ("sweeps"): one documented CSV format for every source of data.
//
//   gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us
//
// gpu     catalog name of the GPU measured (a100_sxm_80gb, b200, ...)
// source  what measured it (engine/library and dtype): efficiency differs by source as much as by GPU
// model   the model whose layer this shape belongs to, blank for model-agnostic sweeps
// label   the operator's name in the source data (attn_pre_proj, ...), blank if none
// op..kv_len  the kernel (kernel_shape.hpp); time_us the median measured time in microseconds
//
// Optional trailing columns (blank or absent = unknown):
//   framework      serving engine the kernel ran under (trtllm, vllm, sglang)
//   version        that engine's (or library's) version
//   kernel_source  the kernel implementation the source names (torch_flow, deepgemm, ...)
//   kv_dtype       attention KV-cache dtype (kernel_shape.hpp); blank = the activation dtype
// format_sweep writes them only when a row has one set, so files without them round-trip unchanged.
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "kernels/kernel_shape.hpp"

namespace ks::kernels {

struct Measurement {
  std::string gpu;
  std::string source;
  std::string model;
  std::string label;
  std::string framework;      // optional column, blank if absent
  std::string version;        // optional column, blank if absent
  std::string kernel_source;  // optional column, blank if absent
  KernelShape shape;          // shape.kv_dtype: the optional kv_dtype column
  Kernel kernel;   // built from shape
  double seconds;  // measured time
};

// Throws CsvError naming the file, line and column for malformed rows (unknown op, dtype or
// kv_dtype, bad numbers, non-positive times).
std::vector<Measurement> read_sweep(const std::string& path);
std::vector<Measurement> parse_sweep(const std::string& text, const std::string& origin);
std::string format_sweep(const std::vector<Measurement>& rows);

class CsvTable;
// The kernel of one CSV row with the shape columns above (blank cells: 0, batch: 1; kv_dtype, if the
// column is there and the cell is not blank, sets shape.kv_dtype). Throws
// CsvError naming the line and column of a bad cell or an invalid shape.
KernelShape read_shape(const CsvTable& table, std::size_t row);
Kernel read_kernel(const CsvTable& table, std::size_t row, KernelShape* shape = nullptr);

// A kernel's shape without the amount of work the engine varies at run time (tokens, M,
// sequences, lengths): one GEMM's N x K, one norm's width, one attention head layout. A model the
// calibration never saw brings new families, so validation holds out whole families.
std::string shape_family(const KernelShape& shape);
// Which of `folds` folds a shape's family falls in: a stable hash of the family (FNV-1a), the
// same on every machine and for every GPU and engine measuring that family.
std::size_t family_fold(const KernelShape& shape, std::size_t folds);

// Groups of a kernel for reporting: "gemm", "attention", "elementwise".
std::string kernel_group(OpKind op);

}  // namespace ks::kernels
