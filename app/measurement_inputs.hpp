#pragma once
// Loading measurements named on a command line (--vidur DIR, --gemm-table F, --sweep F),
// restricted to one GPU and optionally to or away from some models.
#include <set>
#include <string>
#include <vector>

#include "kernels/moe_layer.hpp"
#include "kernels/sweep.hpp"

namespace ks::app {

struct MeasurementInputs {
  std::vector<std::string> vidur, gemm_tables, sweeps;
  std::string gpu;
  std::set<std::string> only_models, exclude_models;  // lower-case model names
  // Shape-family folds (kernels::family_fold): keep only the folds in `fold_set` of `folds`, or
  // every fold but them (`fold_out`); folds 0 = every row. Validation holds out whole families this
  // way; a set of folds nests a split inside another's training folds (0,3,1/6 out, then 1/6 in).
  std::set<std::size_t> fold_set;
  std::size_t folds = 0;
  bool fold_out = false;
};

// "i/k" or "i,j,.../k" -> folds i, j, ... of k (each < k, k >= 2); std::invalid_argument naming
// the option otherwise.
void parse_fold(const std::string& option, const std::string& text, MeasurementInputs& in, bool fold_out);

// Throws kernels::CsvError for unreadable inputs; std::invalid_argument if nothing is left.
std::vector<kernels::Measurement> load_measurements(const MeasurementInputs& in);

// The MoE layer rows (kernels/moe_layer.hpp) of `in.gpu` in `files`, of engine `framework` when
// given, in the folds `in` selects (kernels::moe_layer_fold); std::invalid_argument if files were
// given and no row is left.
std::vector<kernels::MoeLayerMeasurement> load_moe_layers(const std::vector<std::string>& files,
                                                          const MeasurementInputs& in, const std::string& framework);

std::set<std::string> split_models(const std::string& comma_list);

// "h100_sxm,h200" -> {"h100_sxm", "h200"}; every name must be a catalog GPU (std::invalid_argument
// naming the unknown one otherwise).
std::vector<std::string> split_gpus(const std::string& comma_list);

}  // namespace ks::app
