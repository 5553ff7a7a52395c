#pragma once
// How far a tier's kernel predictions stray from measurements, per kernel class: quantiles of
// ln(measured / predicted) over kernels the tier never saw (shape families held out of a target
// calibration, whole GPU generations held out of a cross-gen fit; scripts/fit_uncertainty.sh).
// `run --intervals` draws one time multiplier per class from these to propagate the kernel
// model's error to TTFT, TPOT and throughput.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernels/efficiency_model.hpp"
#include "kernels/tiers.hpp"

namespace ks::kernels {

struct ClassResiduals {
  std::size_t rows = 0;               // measurements behind the quantiles
  std::vector<double> log_ratio;      // ln(measured / predicted) at KernelUncertainty::probabilities()
};

class KernelUncertainty {
 public:
  // Throws std::runtime_error naming the file, line and key of what is malformed.
  static KernelUncertainty load(const std::string& path);
  // <data_dir>/calibration/uncertainty.yaml, loaded once.
  static const KernelUncertainty& shipped();
  static std::string shipped_path();

  const std::vector<double>& probabilities() const { return probabilities_; }
  // Null when the tier has no residuals for the class (nothing measured it).
  const ClassResiduals* residuals(Tier tier, KernelClass cls) const;
  // The measured/predicted ratio at cumulative probability p (linear in p between the stored
  // quantiles, clamped to the outermost ones); 1 where the class has no residuals.
  double ratio_quantile(Tier tier, KernelClass cls, double p) const;

 private:
  std::vector<double> probabilities_;
  std::array<std::array<std::optional<ClassResiduals>, kNumKernelClasses>, 3> by_tier_;
};

// Parses "gemm=1.1,attention_decode=0.9" (class names of class_name()) into per-class time
// multipliers (1 for classes not named). Throws std::invalid_argument saying what is wrong.
std::array<double, kNumKernelClasses> parse_class_scales(const std::string& text);
std::string format_class_scales(const std::array<double, kNumKernelClasses>& scales);

}  // namespace ks::kernels
