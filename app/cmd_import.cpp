// `kernelsight import`: published measurement files -> the sweep format (kernels/sweep.hpp).
#include <iostream>

#include "app/cli_options.hpp"
#include "base/util/csv.hpp"
#include "kernels/importers.hpp"
#include "base/util/atomic_file.hpp"

namespace po = boost::program_options;

namespace ks::app {

int cmd_import(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight import (--vidur DIR --gpu G | --gemm-table F) -o SWEEP.csv\n\n"
      "Converts Vidur profiling folders or GEMM tables (gpu,b,m,n,k,dtype,tflops,time_us) into a\n"
      "sweep CSV: gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,\n"
      "q_len,kv_len,time_us.\n\noptions");
  std::string vidur, table, gpu, out;
  opts.add_options()("help,h", "show this help")("vidur", po::value(&vidur), "Vidur profiling folder")(
      "gemm-table", po::value(&table), "GEMM table CSV")("gpu", po::value(&gpu),
                                                          "catalog name of the GPU a Vidur folder was measured on")(
      "out,o", po::value(&out)->required(), "sweep CSV to write");
  po::variables_map vm;
  if (int rc = parse_options("import", args, opts, vm); rc >= 0) return rc;
  if (vidur.empty() == table.empty()) {
    std::cerr << "kernelsight import: give exactly one of --vidur or --gemm-table\n";
    return kExitBadInput;
  }
  if (!vidur.empty() && gpu.empty()) {
    std::cerr << "kernelsight import: --vidur needs --gpu (the GPU it was measured on)\n";
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    const auto rows = vidur.empty() ? kernels::import_gemm_table(table) : kernels::import_vidur(vidur, gpu);
    util::write_file_atomically(out, kernels::format_sweep(rows));
    std::cerr << "wrote " << rows.size() << " measurements to " << out << "\n";
    return kExitOk;
  });
}

}  // namespace ks::app
