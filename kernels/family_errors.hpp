#pragma once
// Where a tier's error sits: the measured rows grouped by shape family (sweep.hpp's shape_family:
// one GEMM's N x K, one attention head layout, one norm's width), the families that carry the
// largest share of the summed error first. What `kernelsight validate --families N` prints.
#include <string>
#include <vector>

#include "kernels/validation.hpp"

namespace ks::kernels {

struct FamilyError {
  std::string family;     // readable: "gemm bf16 N=4096 K=4096", "attention_decode bf16 heads=32/8 head_dim=128"
  std::size_t n = 0;      // rows
  double mape = 0;        // %
  double geo_ratio = 1;   // geometric mean of predicted / measured (> 1: priced too slow)
  double share = 0;       // % of the summed |predicted / measured - 1| over every row
};

// The shape family's non-zero fields, readable.
std::string describe_family(const KernelShape& shape);

// Every family of `rows` priced by `tier`, the largest share of the summed error first (ties: by name).
std::vector<FamilyError> family_errors(const std::vector<Measurement>& rows, const Predictor& tier);

// The table `validate --families N` prints below its report: the first `limit` families.
std::string format_families(const std::vector<FamilyError>& families, std::size_t limit);

}  // namespace ks::kernels
