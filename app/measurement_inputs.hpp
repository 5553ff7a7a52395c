#pragma once
// Loading measurements named on a command line (--vidur DIR, --gemm-table F, --sweep F),
// restricted to one GPU and optionally to or away from some models.
#include <set>
#include <string>
#include <vector>

#include "kernels/sweep.hpp"

namespace ks::app {

struct MeasurementInputs {
  std::vector<std::string> vidur, gemm_tables, sweeps;
  std::string gpu;
  std::set<std::string> only_models, exclude_models;  // lower-case model names
};

// Throws kernels::CsvError for unreadable inputs; std::invalid_argument if nothing is left.
std::vector<kernels::Measurement> load_measurements(const MeasurementInputs& in);

std::set<std::string> split_models(const std::string& comma_list);

}  // namespace ks::app
