// The kernel-model commands as a user runs them: kernels, import, calibrate, validate.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

// The sweep CSV's shape columns (kernels/sweep.hpp), as the tests' small sweeps write them.
const std::string kSweepHeader =
    "gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us\n";

std::string read(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p).rdbuf();
  return ss.str();
}

// The first `n` lines of a CSV the CLI wrote (header first); missing lines come back empty.
std::vector<std::string> first_lines(const fs::path& p, int n) {
  std::istringstream csv(read(p));
  std::vector<std::string> lines(static_cast<std::size_t>(n));
  for (std::string& line : lines) std::getline(csv, line);
  return lines;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ks_kernel_cli_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(KernelsCli, RooflineTierPredictsTheRooflineOfEachRow) {
  TempDir t;
  std::ofstream(t.path / "k.csv") << "op,dtype,m,n,k\ngemm,bf16,4096,4096,4096\ngemm,bf16,1,8192,8192\n";
  const Result r = kernelsight("kernels --gpu h100_sxm --tier roofline --in " + (t.path / "k.csv").string() +
                               " --out " + (t.path / "p.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = first_lines(t.path / "p.csv", 3);
  const std::string &header = lines[0], &row1 = lines[1], &row2 = lines[2];
  EXPECT_EQ(header, "op,dtype,m,n,k,predicted_us,roofline_us,bound,efficiency");
  // 2 * 4096^3 FLOP at 989.4 dense BF16 TFLOP/s, plus the 2 us launch latency.
  const double want1 = 2.0 * 4096.0 * 4096.0 * 4096.0 / 989.4e12 * 1e6 + 2.0;
  EXPECT_NEAR(std::stod(row1.substr(row1.find("4096,4096,4096,") + 15)), want1, 0.01);
  EXPECT_NE(row1.find(",compute,"), std::string::npos) << row1;
  // M = 1: reading 8192 x 8192 bf16 weights at 3.35 TB/s dominates.
  const double want2 = (8192.0 * 8192.0 * 2 + (8192.0 + 8192.0) * 2) / 3.35e12 * 1e6 + 2.0;
  EXPECT_NEAR(std::stod(row2.substr(row2.find("8192,8192,") + 10)), want2, 0.01);
  EXPECT_NE(row2.find(",memory,"), std::string::npos) << row2;
}

// `validate --rows-out` writes each row's attention shape beside its times, so that errors can be
// studied by heads, grouped-query group and lengths.
TEST(KernelsCli, ValidateRowsOutCarriesTheAttentionShape) {
  TempDir t;
  std::ofstream(t.path / "s.csv")
      << kSweepHeader <<
         "h100_sxm,test,,gemm,gemm,bf16,4096,4096,4096,,,,,,,,,160\n"
         "h100_sxm,test,,decode,attention_decode,bf16,,,,32,,,64,8,128,,2048,40\n";
  const Result r = kernelsight("validate --gpu h100_sxm --tier roofline --sweep " + (t.path / "s.csv").string() +
                               " --rows-out " + (t.path / "rows.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = first_lines(t.path / "rows.csv", 3);
  const std::string &header = lines[0], &gemm = lines[1], &decode = lines[2];
  EXPECT_EQ(header,
            "model,label,op,class,dtype,m,n,k,tokens,hidden,measured_us,predicted_us,roofline_us,"
            "batch,heads,kv_heads,head_dim,q_len,kv_len");
  const auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  EXPECT_TRUE(ends_with(gemm, ",1,0,0,0,0,0")) << gemm;  // one problem, no attention shape
  EXPECT_NE(decode.find(",40,"), std::string::npos) << decode;
  EXPECT_TRUE(ends_with(decode, ",32,64,8,128,0,2048")) << decode;
}

// `validate --families N` lists the shape families with the largest share of the summed error.
// The shares are checked against the times `--rows-out` writes for the same run.
TEST(KernelsCli, ValidateListsTheFamiliesThatCarryTheError) {
  TempDir t;
  std::ofstream(t.path / "s.csv")
      << kSweepHeader <<
         "h100_sxm,test,,gemm,gemm,bf16,4096,4096,4096,,,,,,,,,160\n"
         "h100_sxm,test,,gemm,gemm,bf16,2048,4096,4096,,,,,,,,,85\n"
         "h100_sxm,test,,decode,attention_decode,bf16,,,,32,,,64,8,128,,2048,400\n";
  const Result r = kernelsight("validate --gpu h100_sxm --tier roofline --sweep " + (t.path / "s.csv").string() +
                               " --families 5 --rows-out " + (t.path / "rows.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = first_lines(t.path / "rows.csv", 4);
  // measured_us and predicted_us are columns 11 and 12.
  const auto error = [](const std::string& line) {
    std::istringstream cells(line);
    std::string cell;
    std::vector<double> v;
    for (int i = 0; std::getline(cells, cell, ','); ++i)
      if (i == 10 || i == 11) v.push_back(std::stod(cell));
    return std::fabs(v[1] / v[0] - 1.0);
  };
  const double gemm = error(lines[1]) + error(lines[2]), decode = error(lines[3]);
  ASSERT_GT(decode, gemm);  // the decode row, measured 10x its bandwidth time, comes first
  const std::size_t table = r.out.find("shape families with the largest share of the error (2 of 2):");
  ASSERT_NE(table, std::string::npos) << r.out;
  const std::size_t first = r.out.find("attention_decode bf16 heads=64/8 head_dim=128", table);
  const std::size_t second = r.out.find("gemm bf16 N=4096 K=4096", table);
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second);
  char share[16];
  std::snprintf(share, sizeof share, "%5.1f%%", 100.0 * decode / (gemm + decode));
  const std::size_t line_start = r.out.rfind('\n', first);
  EXPECT_NE(r.out.substr(line_start, first - line_start).find(share), std::string::npos) << r.out;
  const Result bad = kernelsight("validate --gpu h100_sxm --tier roofline --sweep " + (t.path / "s.csv").string() +
                                 " --families -3");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--families must be a count >= 0, got -3"), std::string::npos) << bad.out;
}

// `validate --attention-backend B` scores B's attention rows alone, as `calibrate
// --attention-backend B` fits them; a backend the sweep lacks, or does not know, is an error.
TEST(KernelsCli, ValidateScoresOneAttentionBackend) {
  TempDir t;
  const std::string header =
      "gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us,"
      "framework,version,kernel_source,kv_dtype\n";
  std::ofstream(t.path / "s.csv") << header
                                  << "h100_sxm,t,,d,attention_decode,bf16,,,,32,,,64,8,128,,2048,40,vllm,1,vllm_flash_attn_fa3,bf16\n"
                                     "h100_sxm,t,,d,attention_decode,bf16,,,,32,,,64,8,128,,4096,70,vllm,1,vllm_flash_attn_fa3,bf16\n"
                                     "h100_sxm,t,,d,attention_decode,bf16,,,,32,,,64,8,128,,2048,55,vllm,1,vllm_triton_attn,bf16\n"
                                     "h100_sxm,t,,g,gemm,bf16,4096,4096,4096,,,,,,,,,160,vllm,1,,\n";
  const std::string base = "validate --gpu h100_sxm --tier roofline --sweep " + (t.path / "s.csv").string();
  const auto rows_scored = [&](const std::string& extra) {
    const Result r = kernelsight(base + extra + " --rows-out " + (t.path / "rows.csv").string());
    EXPECT_EQ(r.status, 0) << r.out;
    std::istringstream csv(read(t.path / "rows.csv"));
    int n = -1;  // the header
    for (std::string line; std::getline(csv, line);) ++n;
    return n;
  };
  EXPECT_EQ(rows_scored(""), 4);
  EXPECT_EQ(rows_scored(" --attention-backend fa3"), 2);
  EXPECT_EQ(rows_scored(" --attention-backend triton"), 1);
  const Result none = kernelsight(base + " --attention-backend flashinfer");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.out.find("--attention-backend flashinfer: no attention rows of that backend"), std::string::npos)
      << none.out;
  const Result unknown = kernelsight(base + " --attention-backend fa9");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("unknown --attention-backend 'fa9' (known: fa2, fa3"), std::string::npos) << unknown.out;
}

// `validate --gpu h200 --calibrated-gpu h100_sxm` prices the H200's rows as a scenario prices a
// what-if of an H100: the H100 calibration's learned correction read at the H100 spec, the
// H200's spec (1.43x the HBM bandwidth, the same FLOP/s) in the roofline-shaped terms. A
// memory-bound GEMM then speeds up by at most the bandwidth ratio; a compute-bound one keeps its time.
TEST(KernelsCli, ValidatePricesAWhatIfOfTheCalibratedGpu) {
  TempDir t;
  const std::string rows = ",t,,g,gemm,bf16,1,8192,8192,,,,,,,,,50\n"
                           ",t,,g,gemm,bf16,8192,8192,8192,,,,,,,,,1300\n";
  auto sweep = [&](const std::string& gpu) {
    std::string text = kSweepHeader;
    std::istringstream lines(rows);
    for (std::string line; std::getline(lines, line);) text += gpu + line + "\n";
    return text;
  };
  std::ofstream(t.path / "h200.csv") << sweep("h200");
  std::ofstream(t.path / "h100.csv") << sweep("h100_sxm");
  const std::string cal = std::string(KS_SOURCE_DIR) + "/data/calibration/target_h100_sxm.vllm.yaml";
  const auto predicted = [&](const std::string& args) {
    const Result r = kernelsight("validate --tier target --calibration " + cal + " " + args + " --rows-out " +
                                 (t.path / "rows.csv").string());
    EXPECT_EQ(r.status, 0) << r.out;
    std::vector<double> us;
    for (const std::string& line : first_lines(t.path / "rows.csv", 3)) {
      if (line.rfind("model,", 0) == 0 || line.empty()) continue;
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      us.push_back(std::stod(cells.at(11)));  // predicted_us
    }
    return us;
  };
  const std::vector<double> h100 = predicted("--gpu h100_sxm --sweep " + (t.path / "h100.csv").string());
  const std::vector<double> what_if =
      predicted("--gpu h200 --calibrated-gpu h100_sxm --sweep " + (t.path / "h200.csv").string());
  ASSERT_EQ(h100.size(), 2u);
  ASSERT_EQ(what_if.size(), 2u);
  EXPECT_LT(what_if[0], h100[0] / 1.1);          // memory-bound: faster with 1.43x the bandwidth ...
  EXPECT_GE(what_if[0], h100[0] / 1.433 - 1e-9);  // ... by no more than that
  EXPECT_NEAR(what_if[1] / h100[1], 1.0, 0.01);   // compute-bound: the same tensor FLOP/s
  const Result roof = kernelsight("validate --tier roofline --gpu h200 --calibrated-gpu h100_sxm --sweep " +
                                  (t.path / "h200.csv").string());
  EXPECT_EQ(roof.status, 2);
  EXPECT_NE(roof.out.find("--calibrated-gpu needs a learned tier"), std::string::npos) << roof.out;
  const Result unknown = kernelsight("validate --tier target --calibration " + cal +
                                     " --gpu h200 --calibrated-gpu h999 --sweep " + (t.path / "h200.csv").string());
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("unknown --calibrated-gpu 'h999'"), std::string::npos) << unknown.out;
  // A target calibration read at the spec of a GPU it was not fitted on is refused.
  const Result other = kernelsight("validate --tier target --calibration " + cal +
                                   " --gpu h200 --calibrated-gpu b200 --sweep " + (t.path / "h200.csv").string());
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.out.find("--calibrated-gpu b200: "), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("was fitted on h100_sxm, not on it"), std::string::npos) << other.out;
}

// `validate --tier cross-gen --calibration F` prices with F, not with a fit of the shipped sweeps:
// a hand-written model whose GEMM floor is 1000 us prices a small GEMM at no less than that
// (every shipped fit prices it at tens of microseconds).
TEST(KernelsCli, ValidateCrossGenUsesTheGivenCalibration) {
  TempDir t;
  std::ofstream(t.path / "cg.yaml")
      << "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 1000, softmax_p: 4, "
         "bytes_per_sm_cycle: 64, w_compute: [1], w_memory: [1]}\n";
  std::ofstream(t.path / "s.csv")
      << kSweepHeader <<
         "h100_sxm,t,,g,gemm,bf16,16,4096,4096,,,,,,,,,20\n";
  const Result r = kernelsight("validate --gpu h100_sxm --tier cross-gen --calibration " +
                               (t.path / "cg.yaml").string() + " --sweep " + (t.path / "s.csv").string() +
                               " --rows-out " + (t.path / "rows.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string row = first_lines(t.path / "rows.csv", 2)[1];
  std::vector<std::string> cells;
  std::stringstream ss(row);
  for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
  ASSERT_GT(cells.size(), 11u) << row;
  EXPECT_GE(std::stod(cells[11]), 1000.0) << row;  // predicted_us
}

TEST(KernelsCli, BadRowsAndMissingCalibrationsExitTwo) {
  TempDir t;
  std::ofstream(t.path / "bad.csv") << "op,dtype,m,n,k\ngemm,bf16,1,1,1\nconv,bf16,1,1,1\n";
  Result r = kernelsight("kernels --gpu h100_sxm --tier roofline --in " + (t.path / "bad.csv").string() +
                         " --out " + (t.path / "p.csv").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bad.csv:3: column 'op'"), std::string::npos) << r.out;
  std::ofstream(t.path / "ok.csv") << "op,dtype,m,n,k\ngemm,bf16,1,1,1\n";
  r = kernelsight("kernels --gpu h100_sxm --tier target --in " + (t.path / "ok.csv").string() + " --out " +
                  (t.path / "p.csv").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("no target-tier calibration"), std::string::npos) << r.out;
  EXPECT_EQ(kernelsight("kernels --gpu tpu_v9 --in x --out y").status, 2);
  EXPECT_EQ(kernelsight("validate --gpu a40 --tier best --sweep x").status, 2);
}

// import -> calibrate -> validate on a small GEMM table: the calibrated target tier must beat the
// roofline on the GPU it was calibrated for.
TEST(KernelsCli, ImportCalibrateValidateRoundTrip) {
  TempDir t;
  {
    std::ofstream table(t.path / "gemm.csv");
    table << "gpu,b,m,n,k,dtype,tflops,time_us\n";
    // A "B200" whose GEMMs run at 60% of the dense BF16 peak plus 5 us.
    for (int m : {256, 512, 1024, 2048, 4096})
      for (int n : {1024, 4096})
        for (int k : {1024, 4096}) {
          const double us = 2.0 * m * n * k / (0.6 * 2250e12) * 1e6 + 5.0;
          table << "B200 (sm_100),1," << m << "," << n << "," << k << ",bf16xbf16->bf16,0," << us << "\n";
        }
  }
  const std::string sweep = (t.path / "sweep.csv").string();
  Result r = kernelsight("import --gemm-table " + (t.path / "gemm.csv").string() + " -o " + sweep);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read(sweep).find("b200,xla-bf16,,bf16xbf16->bf16,gemm,bf16,256,1024,1024,1"), std::string::npos);

  const std::string cal = (t.path / "cal.yaml").string();
  r = kernelsight("calibrate --gpu b200 --sweep " + sweep + " -o " + cal);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read(cal).find("kernel_efficiency_model"), std::string::npos);

  r = kernelsight("validate --gpu b200 --tier target --calibration " + cal + " --sweep " + sweep);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto line = r.out.substr(r.out.find("kernel MAPE: tier target "));
  double tier = 0, roof = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "kernel MAPE: tier target %lf%% roofline %lf%%", &tier, &roof), 2) << line;
  EXPECT_LT(tier, 5.0);
  EXPECT_GT(roof, 20.0);  // the roofline misses the 60% efficiency entirely
}

// `validate --moe` scores whole MoE layers, each priced as the sum of the kernels the simulator runs
// for it, in classes of their own; a GPU without rows in the files is an error.
TEST(KernelsCli, ValidateScoresWholeMoeLayers) {
  TempDir t;
  std::ofstream(t.path / "moe.csv")
      << "gpu,source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,time_us,framework,version,kernel_source\n"
         "h100_sxm,aic-trtllm-bf16,bf16,4096,4096,14336,2,8,1,1,4000,trtllm,1.3,cutlass\n"
         "h100_sxm,aic-trtllm-bf16,bf16,64,4096,14336,2,8,1,4,90,trtllm,1.3,cutlass\n"
         "b200,aic-trtllm-bf16,bf16,64,4096,14336,2,8,1,1,60,trtllm,1.3,cutlass\n";
  const std::string moe = (t.path / "moe.csv").string();
  const Result r = kernelsight("validate --gpu h100_sxm --tier roofline --moe " + moe + " --moe-rows-out " +
                               (t.path / "rows.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("{moe bf16}                       1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{moe-ep bf16}                    1"), std::string::npos) << r.out;
  const std::vector<std::string> lines = first_lines(t.path / "rows.csv", 4);
  EXPECT_EQ(lines[0], "gpu,framework,kernel_source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,measured_us,"
                      "predicted_us,roofline_us");
  EXPECT_TRUE(lines[3].empty()) << "the B200 row is not the H100's";
  // 8192 routed rows through 8 experts' gate/up (4096 -> 2 x 14336) and down GEMMs: 2.886e12 FLOP at
  // the H100's 989.4 dense BF16 TFLOP/s; SwiGLU reads two and writes one 8192 x 14336 bf16 tensor and
  // the weighted sum reads 8192 rows and writes 4096 at 3.35 TB/s; five launches of 2 us.
  const double gemms_us = 2.0 * 8192 * 4096 * 14336 * 3 / 989.4e12 * 1e6;
  const double silu_us = 3.0 * 8192 * 14336 * 2 / 3.35e12 * 1e6;
  const double sum_us = (8192.0 + 4096.0) * 4096 * 2 / 3.35e12 * 1e6;
  const std::string& big = lines[1];
  const double roof = std::stod(big.substr(big.rfind(',') + 1));
  EXPECT_NEAR(roof, gemms_us + silu_us + sum_us + 5 * 2.0, 2.0);
  const Result none = kernelsight("validate --gpu a100_sxm_80gb --tier roofline --moe " + moe);
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.out.find("no MoE layer rows left of GPU a100_sxm_80gb"), std::string::npos) << none.out;
}

// `calibrate --calibration F --moe T` fits a target file's expert-GEMM correction on a GPU's MoE
// layers and writes it; the correction belongs to one GPU's engine, not to the cross-gen model.
TEST(KernelsCli, CalibrateFitsTheMoeCorrectionOfATargetFile) {
  TempDir t;
  const std::string src = KS_SOURCE_DIR;
  const std::string moe = src + "/data/moe/aiconfigurator/l40s.trtllm.csv";
  const Result r = kernelsight("calibrate --gpu l40s --framework trtllm --calibration " + src +
                               "/data/calibration/target_l40s.trtllm.yaml --moe " + moe + " --holdout-fold 0/3 -o " +
                               (t.path / "m.yaml").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("moe_gemm correction: "), std::string::npos) << r.out;
  EXPECT_NE(read(t.path / "m.yaml").find("moe_gemm_correction:"), std::string::npos);
  const std::string validate = "validate --gpu l40s --tier target --calibration " + (t.path / "m.yaml").string() +
                               " --moe " + moe + " --fold 0/3";
  const Result with = kernelsight(validate), without = kernelsight(validate + " --without-moe-correction");
  ASSERT_EQ(with.status, 0) << with.out;
  ASSERT_EQ(without.status, 0) << without.out;
  EXPECT_NE(with.out, without.out);
  const Result cross = kernelsight("calibrate --cross-gen --framework trtllm --moe " + moe + " -o " + (t.path / "c.yaml").string());
  EXPECT_EQ(cross.status, 2) << cross.out;
  EXPECT_NE(cross.out.find("not the cross-gen model"), std::string::npos) << cross.out;
  const Result alone = kernelsight("calibrate --gpu l40s --calibration " + (t.path / "m.yaml").string() + " -o " +
                                   (t.path / "x.yaml").string());
  EXPECT_EQ(alone.status, 2) << alone.out;
}
