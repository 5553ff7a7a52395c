// Fuzz target: the calibration importers (sweep CSV, GEMM tables, Vidur-style CSV tables) and the
// calibration YAML. Bad input must end in CsvError / SpecError naming the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/util/csv.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/importers.hpp"
#include "kernels/spec_error.hpp"
#include "kernels/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ks::kernels::format_sweep(ks::kernels::parse_sweep(text, "fuzz.csv"));
  } catch (const ks::kernels::CsvError&) {
  }
  try {
    (void)ks::kernels::import_gemm_rows(ks::kernels::CsvTable::parse(text, "fuzz.csv"), "xla");
  } catch (const ks::kernels::CsvError&) {
  }
  try {
    (void)ks::kernels::EfficiencyModel::from_yaml(text, "fuzz.yaml").to_yaml();
  } catch (const ks::kernels::SpecError&) {
  }
  return 0;
}
