#pragma once
// Per-kernel error of a prediction tier against measurements, beside the roofline baseline.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/sweep.hpp"

namespace ks::kernels {

struct ErrorStats {
  std::size_t n = 0;
  double mape = 0;        // mean absolute percentage error, %
  double median_ape = 0;  // median absolute percentage error, %
};

struct ValidationReport {
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> by_label;  // label -> (tier, roofline)
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> by_group;  // gemm / attention / elementwise
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> by_class;  // "gemm bf16", "attention_decode bf16", ...
  std::pair<ErrorStats, ErrorStats> overall;
};

using Predictor = std::function<double(const Measurement&)>;  // seconds

ValidationReport evaluate(const std::vector<Measurement>& rows, const Predictor& tier, const Predictor& roofline);

// One measurement already priced: what a report files it under, and the three times (seconds).
struct ScoredRow {
  std::string label;  // operator ("attn_pre_proj", "gemm", "moe_layer", ...)
  std::string cls;    // class and dtype ("gemm bf16", "moe fp8", ...)
  std::string group;  // "gemm", "attention", "elementwise", "moe"
  double measured = 0, tier = 0, roofline = 0;
};
ValidationReport evaluate(const std::vector<ScoredRow>& rows);
// The measurements priced by both predictors, filed as evaluate(rows, tier, roofline) files them.
std::vector<ScoredRow> evaluate_rows(const std::vector<Measurement>& rows, const Predictor& tier,
                                     const Predictor& roofline);

ErrorStats error_stats(const std::vector<double>& abs_pct_errors);

// The table `kernelsight validate` prints; its last line is
// "kernel MAPE: tier <name> X% roofline Y%".
std::string format_report(const ValidationReport& report, const std::string& tier_name);

}  // namespace ks::kernels
