#include "app/measurement_inputs.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "kernels/gpu_catalog.hpp"
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
    if (in.folds > 0 && (in.fold_set.count(kernels::family_fold(m.shape, in.folds)) > 0) == in.fold_out) continue;
    out.push_back(std::move(m));
  }
  if (out.empty())
    throw std::invalid_argument("no measurements left for GPU '" + in.gpu + "' after filtering (" +
                                std::to_string(all.size()) + " read)");
  return out;
}

std::vector<kernels::MoeLayerMeasurement> load_moe_layers(const std::vector<std::string>& files,
                                                          const MeasurementInputs& in, const std::string& framework) {
  std::vector<kernels::MoeLayerMeasurement> out;
  std::size_t read = 0;
  for (const auto& f : files)
    for (auto& l : kernels::read_moe_layers(f)) {
      ++read;
      if (!in.gpu.empty() && l.gpu != in.gpu) continue;
      if (!framework.empty() && l.framework != framework) continue;
      if (in.folds > 0 && (in.fold_set.count(kernels::moe_layer_fold(l.shape, in.folds)) > 0) == in.fold_out) continue;
      out.push_back(std::move(l));
    }
  if (!files.empty() && out.empty())
    throw std::invalid_argument("--moe: no MoE layer rows left" + (in.gpu.empty() ? std::string() : " of GPU " + in.gpu) +
                                (framework.empty() ? std::string() : " under " + framework) + " after filtering (" +
                                std::to_string(read) + " read)");
  return out;
}

void parse_fold(const std::string& option, const std::string& text, MeasurementInputs& in, bool fold_out) {
  const auto slash = text.find('/');
  const auto number = [&](const std::string& part) {
    std::size_t used = 0;
    const std::size_t v = std::stoul(part, &used);
    if (used != part.size() || part.empty() || !std::isdigit(static_cast<unsigned char>(part[0])))
      throw std::invalid_argument("");
    return v;
  };
  std::set<std::size_t> set;
  std::size_t k = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("");
    k = number(text.substr(slash + 1));
    std::stringstream list(text.substr(0, slash));
    std::string item;
    while (std::getline(list, item, ',')) set.insert(number(item));
    if (set.empty() || text[slash - 1] == ',') throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument(option + " " + text + ": expected FOLD/FOLDS or FOLD,FOLD,.../FOLDS, e.g. 0/3");
  }
  if (k < 2 || *set.rbegin() >= k || set.size() >= k)
    throw std::invalid_argument(option + " " + text +
                                ": expected 0 <= FOLD < FOLDS, FOLDS >= 2 and at least one fold left over");
  in.fold_set = std::move(set);
  in.folds = k;
  in.fold_out = fold_out;
}

std::vector<std::string> split_gpus(const std::string& list) {
  std::vector<std::string> gpus;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    if (!name.empty()) {
      if (kernels::find_builtin_gpu(name) == nullptr)
        throw std::invalid_argument("unknown GPU '" + name + "' in a GPU list (see kernelsight list)");
      gpus.push_back(name);
    }
    start = comma + 1;
  }
  return gpus;
}

}  // namespace ks::app
