#include "kernels/family_errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "kernels/dtype.hpp"

namespace ks::kernels {

std::string describe_family(const KernelShape& s) {
  std::ostringstream out;
  out << s.op << ' ' << dtype_name(s.dtype);
  if (s.n > 0) out << " N=" << s.n;
  if (s.k > 0) out << " K=" << s.k;
  if (s.op == "gemm" && s.batch > 1) out << " batch=" << s.batch;
  if (s.hidden > 0) out << " hidden=" << s.hidden;
  if (s.heads > 0) out << " heads=" << s.heads << '/' << (s.kv_heads > 0 ? s.kv_heads : s.heads);
  if (s.head_dim > 0) out << " head_dim=" << s.head_dim;
  return out.str();
}

std::vector<FamilyError> family_errors(const std::vector<Measurement>& rows, const Predictor& tier) {
  struct Sums {
    std::string name;
    std::size_t n = 0;
    double abs_error = 0, log_ratio = 0;
  };
  std::map<std::string, Sums> families;  // shape_family key -> sums
  double total = 0;
  for (const Measurement& m : rows) {
    const double ratio = tier(m) / m.seconds;
    Sums& f = families[shape_family(m.shape)];
    if (f.n == 0) f.name = describe_family(m.shape);
    ++f.n;
    f.abs_error += std::fabs(ratio - 1.0);
    f.log_ratio += std::log(ratio);
    total += std::fabs(ratio - 1.0);
  }
  std::vector<FamilyError> out;
  out.reserve(families.size());
  for (const auto& [key, f] : families) {
    FamilyError e;
    e.family = f.name;
    e.n = f.n;
    e.mape = 100.0 * f.abs_error / static_cast<double>(f.n);
    e.geo_ratio = std::exp(f.log_ratio / static_cast<double>(f.n));
    e.share = total > 0 ? 100.0 * f.abs_error / total : 0.0;
    out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const FamilyError& a, const FamilyError& b) {
    return a.share != b.share ? a.share > b.share : a.family < b.family;
  });
  return out;
}

std::string format_families(const std::vector<FamilyError>& families, std::size_t limit) {
  std::ostringstream out;
  const std::size_t shown = std::min(limit, families.size());
  out << "\nshape families with the largest share of the error (" << shown << " of " << families.size() << "):\n";
  out << "  share    MAPE  pred/meas    rows  family\n";
  char line[96];
  for (std::size_t i = 0; i < shown; ++i) {
    const FamilyError& f = families[i];
    std::snprintf(line, sizeof line, "  %5.1f%%  %5.1f%%  %9.3f  %6zu  ", f.share, f.mape, f.geo_ratio, f.n);
    out << line << f.family << '\n';
  }
  return out.str();
}

}  // namespace ks::kernels
