#include "app/measurement_inputs.hpp"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "kernels/importers.hpp"

namespace ks::app {

std::set<std::string> split_models(const std::string& list) {
  std::set<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    for (char& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!item.empty()) out.insert(item);
  }
  return out;
}

std::vector<kernels::Measurement> load_measurements(const MeasurementInputs& in) {
  std::vector<kernels::Measurement> all;
  auto append = [&](std::vector<kernels::Measurement> part) {
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  };
  for (const auto& d : in.vidur) append(kernels::import_vidur(d, in.gpu));
  for (const auto& f : in.gemm_tables) append(kernels::import_gemm_table(f));
  for (const auto& f : in.sweeps) append(kernels::read_sweep(f));
  std::vector<kernels::Measurement> out;
  for (auto& m : all) {
    if (!in.gpu.empty() && m.gpu != in.gpu) continue;
    if (!in.only_models.empty() && !in.only_models.count(m.model)) continue;
    if (in.exclude_models.count(m.model)) continue;
    out.push_back(std::move(m));
  }
  if (out.empty())
    throw std::invalid_argument("no measurements left for GPU '" + in.gpu + "' after filtering (" +
                                std::to_string(all.size()) + " read)");
  return out;
}

}  // namespace ks::app
