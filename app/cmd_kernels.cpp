// `kernelsight kernels`: predict the time of a list of kernels on a GPU in a tier.
#include <cstdio>
#include <iostream>

#include "app/cli_options.hpp"
#include "kernels/calibration_store.hpp"
#include "base/util/csv.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/sweep.hpp"
#include "base/util/atomic_file.hpp"

namespace po = boost::program_options;

namespace ks::app {

int cmd_kernels(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight kernels --gpu G --tier T [--calibration F] --in K.csv --out P.csv\n\n"
      "Input columns: op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len (blank\n"
      "where unused; op is gemm, rmsnorm, layernorm, silu_mul, gelu, rope, add, embedding,\n"
      "attention_prefill or attention_decode). Output: the input columns plus predicted_us,\n"
      "roofline_us, bound and efficiency.\n\noptions");
  std::string engine, attention_backend;
  std::string gpu_name, tier_text, calibration, in, out;
  opts.add_options()("help,h", "show this help")("gpu", po::value(&gpu_name)->required(), "catalog name of the GPU")(
      "tier", po::value(&tier_text)->default_value("cross-gen"), "roofline | cross-gen | target")(
      "engine", po::value(&engine), "engine whose measured kernels calibrate the tier (trtllm, vllm, sglang)")(
      "attention-backend", po::value(&attention_backend),
      "attention backend whose calibration prices attention (fa2, fa3, fa4, flashinfer, trtllm, triton; "
      "default: the engine's default where calibrated)")(
      "calibration", po::value(&calibration), "calibration file (target tier)")(
      "in", po::value(&in)->required(), "kernels CSV")("out", po::value(&out)->required(), "predictions CSV");
  po::variables_map vm;
  if (int rc = parse_options("kernels", args, opts, vm); rc >= 0) return rc;
  const auto tier = kernels::parse_tier(tier_text);
  if (!tier) {
    std::cerr << "kernelsight kernels: --tier must be roofline, cross-gen or target, got '" << tier_text << "'\n";
    return kExitBadInput;
  }
  const kernels::GpuSpec* gpu = kernels::find_builtin_gpu(gpu_name);
  if (gpu == nullptr) {
    std::cerr << "kernelsight kernels: unknown GPU '" << gpu_name << "' (see kernelsight list)\n";
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    const kernels::CsvTable table = kernels::CsvTable::read_file(in);
    std::shared_ptr<const kernels::EfficiencyModel> model;
    if (*tier != kernels::Tier::Roofline) {
      try {
        model = kernels::tier_model(*tier, gpu_name, calibration, engine, attention_backend);
      } catch (const std::runtime_error& e) {
        throw std::invalid_argument(e.what());  // a missing or malformed calibration is bad input
      }
    }
    const kernels::KernelCostModel costs(*tier, *gpu, model, kernels::kRooflineLaunchSeconds);

    std::string csv;
    for (const auto& h : table.header()) csv += h + ",";
    csv += "predicted_us,roofline_us,bound,efficiency\n";
    char buf[160];
    for (std::size_t r = 0; r < table.rows(); ++r) {
      const kernels::Kernel k = kernels::read_kernel(table, r);
      const kernels::KernelCost c = costs.cost(k);
      const double roof = kernels::roofline_cost(k, *gpu, kernels::kRooflineLaunchSeconds).seconds;
      for (const auto& h : table.header()) csv += table.cell(r, h) + ",";
      std::snprintf(buf, sizeof buf, "%.6g,%.6g,%s,%.4f\n", c.seconds * 1e6, roof * 1e6,
                    std::string(kernels::bound_name(c.bound)).c_str(), c.efficiency);
      csv += buf;
    }
    util::write_file_atomically(out, csv);
    std::cerr << "predicted " << table.rows() << " kernels on " << gpu_name << " (" << tier_text << "); wrote " << out
              << "\n";
    return kExitOk;
  });
}

}  // namespace ks::app
