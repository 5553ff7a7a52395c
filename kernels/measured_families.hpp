#pragma once
// What the target GPU's sweep measured, kept beside the model fitted to it. A kernel whose shape
// family (everything but the work the engine varies: one GEMM's N x K, one norm's width) was
// measured is predicted from that family's own measurements: the class model times the family's
// measured deviation from it, interpolated in log2 M between the measured points. Within a
// family, GEMM time is a staircase of the library's kernel choices (tile, split-K, waves) that a
// class model fitted to many families smooths over and cannot place for one family; the family's
// measurements pin it down, as a profile-based simulator's lookup would, and the model still
// supplies the shape between and beyond the measured points. Families the sweep never measured
// are predicted by the class model alone.
//
// Whether a class uses its families is decided on the sweep alone (select_measured_families):
// with every other measured M of each family left out, do the remaining points predict them
// better than the class model? Points that are noise rather than structure (small elementwise
// kernels) predict their neighbours worse, and the class keeps the model alone.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kernels/kernel.hpp"

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace ks::kernels {

// A kernel's shape family: the kernel without its work m (GEMM rows, tokens). Attention has two
// work dimensions (queries and keys) and no family here.
struct ShapeFamilyKey {
  OpKind op = OpKind::Gemm;
  DType dtype = DType::FP16;
  std::int64_t n = 0, k = 0, batch = 1, groups = 1;
  bool operator==(const ShapeFamilyKey& o) const {
    return op == o.op && dtype == o.dtype && n == o.n && k == o.k && batch == o.batch && groups == o.groups;
  }
};
struct ShapeFamilyKeyHash {
  std::size_t operator()(const ShapeFamilyKey& key) const;
};

// Whether kernels of this op have a one-dimensional family (every op but attention and collectives).
bool has_shape_family(OpKind op);
ShapeFamilyKey shape_family_key(const Kernel& kernel);

// One measured family. Bytes and FLOPs are affine in m within a family (bytes = a m + b,
// flops = c m); they are kept so that a kernel of the same N x K but other operand widths (an
// int4-weight GEMM beside a measured fp16 one) is not mistaken for a member.
struct MeasuredFamily {
  ShapeFamilyKey key;
  double bytes_per_m = 0, bytes_fixed = 0, flops_per_m = 0;
  std::vector<double> log2_m;     // ascending, distinct
  std::vector<double> log_ratio;  // log(measured / class model) at each, averaged over repeats

  bool contains(const Kernel& kernel) const;
  // The log deviation at log2 m: interpolated between measured points; beyond them the edge's
  // value, fading linearly to nothing over `fade_octaves` (infinite: held).
  double log_deviation(double log2_m_value, double fade_octaves) const;
};

// One measurement, as the calibration sees it.
struct FamilyMeasurement {
  Kernel kernel;
  double log_ratio;  // log(measured / class model)
};

class MeasuredFamilies {
 public:
  // Groups measurements by family; families whose bytes or FLOPs are not affine in m (two
  // operand widths under one key) are left out.
  static MeasuredFamilies build(const std::vector<FamilyMeasurement>& rows);

  bool empty() const { return families_.empty(); }
  std::size_t size() const { return families_.size(); }
  const std::vector<MeasuredFamily>& families() const { return families_; }
  // log(measured / class model) for a kernel: 0 when its family was not measured.
  double log_deviation(const Kernel& kernel, double fade_octaves) const;

  // How the class decided (select_measured_families); probe_rows 0: never probed.
  std::size_t probe_rows = 0, probe_families = 0, probe_better_in = 0;
  double probe_mape = 0;        // %, with the families' points
  double model_probe_mape = 0;  // %, the class model alone

  void emit(YAML::Emitter& out) const;
  static MeasuredFamilies parse(const YAML::Node& node);  // throws std::runtime_error

 private:
  void index();
  std::vector<MeasuredFamily> families_;
  std::unordered_map<ShapeFamilyKey, std::size_t, ShapeFamilyKeyHash> by_key_;
};

// Significance a class's families must reach to be used (one-sided sign test over families).
constexpr double kMeasuredFamilySignificance = 0.05;

// Decides from the sweep alone whether the class uses its measured families. Every other
// distinct m of each family is left out and predicted from the rest (interpolated, held at the
// edges); the families are kept only if that lowers the left-out rows' mean |predicted /
// measured - 1| against the class model alone, and lowers it in a significant majority of the
// families. Returns the families (empty if rejected) with the probe's figures.
MeasuredFamilies select_measured_families(const std::vector<FamilyMeasurement>& rows);

}  // namespace ks::kernels
