#pragma once
// Turns published measurement files into sweeps (sweep.hpp).
#include <string>
#include <vector>

#include "kernels/sweep.hpp"

namespace ks::kernels {

// A Vidur profiling folder (microsoft/vidur data/profiling/compute/<gpu>/...): every mlp.csv
// (per-layer operators by num_tokens and TP) and attention*.csv (prefill/decode attention) below
// `dir`. Vidur profiled a sarathi-serve (vLLM-derived) engine in fp16; times are medians in ms.
// `gpu` is our catalog name of the GPU profiled (a100_sxm_80gb, a40, ...).
std::vector<Measurement> import_vidur(const std::string& dir, const std::string& gpu);

// A GEMM table in the form  gpu,b,m,n,k,dtype,tflops,time_us  (XLA's GPU performance tables).
// GPU names like "B200 (sm_100)" map to catalog names (b200); dtypes like "bf16xbf16->bf16" map
// to our dtypes by their inputs; of several output variants of one input dtype and shape the
// first row is kept. f32 rows are skipped (TF32 or not is not recorded, so the peak is unknown).
std::vector<Measurement> import_gemm_table(const std::string& path, const std::string& source = "xla");
// The same from a table already read (fuzzing, tests).
class CsvTable;
std::vector<Measurement> import_gemm_rows(const CsvTable& table, const std::string& source);

}  // namespace ks::kernels
