// The GPU target's stream semantics and the host's step timing over TLM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "hw/gpu/gpu_module.hpp"
#include "hw/host/host_cpu.hpp"
#include "base/util/csv.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"
#include "base/config/document.hpp"
#include "tests/support/engine_host.hpp"
#include "tests/support/schema_params.hpp"
#include "tests/support/step_time.hpp"
#include "sc_modules/sim/sim.hpp"
#include "proto/payload_pool.hpp"

using namespace ks;

namespace {

using ks::test_support::resolve_params;
config::Params resolve(const std::string& yaml, const config::Schema& schema) {
  return resolve_params(yaml, schema);
}

std::unique_ptr<hw::GpuModule> make_gpu(const std::string& yaml) {
  const auto& entry = hw::gpu_registry().get("catalog", {}, "gpu");
  return entry.make({"gpu0", 0, resolve(yaml, entry.schema)});
}

std::unique_ptr<test_support::EngineHost> make_host(const std::string& yaml, const std::string& kind = "fixed_overhead") {
  return test_support::make_engine_host(yaml, kind);
}

// A test initiator that launches kernels by hand.
struct Launcher : sc_core::sc_module {
  proto::GpuInitiatorSocket<Launcher> socket{"socket"};
  proto::PayloadPool pool;
  explicit Launcher(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}

  proto::KernelLaunch launch(const kernels::Kernel& k, int stream, sc_core::sc_time delay, int repeat = 1) {
    proto::PooledPayload p(pool);
    auto& ext = proto::PayloadPool::extension<proto::KernelLaunch>(*p);
    ext.kernel = k;
    ext.stream = stream;
    ext.repeat = repeat;
    socket->b_transport(*p, delay);
    EXPECT_EQ(p->get_response_status(), tlm::TLM_OK_RESPONSE);
    return ext;
  }
};

kernels::Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  kernels::Kernel g{};
  g.op = kernels::OpKind::Gemm;
  g.name = "test_gemm";
  g.dtype = kernels::DType::BF16;
  g.m = m, g.n = n, g.k = k;
  g.flops = 2.0 * m * n * k;
  g.bytes = 2.0 * (m * k + n * k + m * n);
  return g;
}

double ps_to_s(const sc_core::sc_time& t) { return static_cast<double>(t.value()) * 1e-12; }

}  // namespace

TEST(GpuModule, StreamsRunTheirKernelsInOrderAndIndependently) {
  sim::Environment env;
  auto gpu = make_gpu("spec: h100_sxm\ntier: roofline\nkernel_overhead: 0us\n");
  proto::KernelStatsTable stats;  // the sink the app would hand it
  gpu->set_stats_sink(stats);
  Launcher launcher("launcher");
  launcher.socket.bind(gpu->socket);
  const kernels::Kernel big = gemm(4096, 4096, 4096);
  // 2*4096^3 FLOP at 989.4 TFLOP/s dense BF16 (compute bound).
  const double t_big = 2.0 * 4096.0 * 4096.0 * 4096.0 / gpu->spec().peak(kernels::DType::BF16);
  env.process([&] {
    const auto a = launcher.launch(big, 0, sc_core::SC_ZERO_TIME);
    const auto b = launcher.launch(big, 0, sc_core::SC_ZERO_TIME);      // queued behind a
    const auto c = launcher.launch(big, 1, sc_core::SC_ZERO_TIME);      // other stream: starts now
    const auto d = launcher.launch(big, 1, sim::seconds(1.0), 3);       // issued 1 s ahead, 3 repeats
    EXPECT_EQ(a.cost.bound, kernels::Bound::Compute);
    EXPECT_NEAR(ps_to_s(a.finish), t_big, 1e-12);
    EXPECT_EQ(b.start, a.finish);
    EXPECT_NEAR(ps_to_s(b.finish), 2 * t_big, 2e-12);
    EXPECT_EQ(c.start, sc_core::SC_ZERO_TIME);
    EXPECT_NEAR(ps_to_s(d.start), 1.0, 1e-12);
    EXPECT_NEAR(ps_to_s(d.finish), 1.0 + 3 * t_big, 3e-12);
    EXPECT_EQ(gpu->stream_free_at(-1), d.finish);
  });
  env.run();
  EXPECT_EQ(gpu->kernels_executed(), 6u);
  EXPECT_NEAR(gpu->busy_seconds(), 6 * t_big, 1e-9);
  ASSERT_EQ(stats.rows().size(), 1u);
  EXPECT_EQ(stats.rows().begin()->first.name, "test_gemm");
  EXPECT_EQ(stats.rows().begin()->second.launches, 6u);
  EXPECT_NEAR(stats.busy_seconds(), 6 * t_big, 1e-9);
  EXPECT_EQ(launcher.pool.allocated(), 1u);  // one payload, reused
}

// GPUs of one configuration share one cost model (kernels/shared_cost_model.hpp), observable as
// one spec object; any pricing difference (time scale, what-if spec, tier, attention backend)
// gives a GPU its own, with its own prices.
TEST(CatalogGpu, GpusOfOneConfigurationShareTheirCostModel) {
  const auto& entry = hw::gpu_registry().get("catalog", {}, "gpu");
  const std::string roofline = "spec: h100_sxm\nkernel_overhead: 3us\ntier: roofline\n";
  const std::string target = "spec: h100_sxm\nkernel_overhead: 3us\ntier: target\nkernel_engine: vllm\n";
  const std::vector<std::string> configs = {roofline,
                                            roofline,
                                            roofline + "kernel_time_scale: gemm=1.5\n",
                                            roofline + "hbm_bandwidth: 6.7TB/s\n",
                                            target + "attention_backend: fa3\n",
                                            target + "attention_backend: fa4\n"};
  std::vector<std::unique_ptr<hw::GpuModule>> gpus;
  for (std::size_t i = 0; i < configs.size(); ++i)
    gpus.push_back(entry.make({"share" + std::to_string(i), static_cast<int>(i), resolve(configs[i], entry.schema)}));
  EXPECT_EQ(&gpus[0]->spec(), &gpus[1]->spec()) << "one configuration: one model";
  for (std::size_t i = 2; i < gpus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(&gpus[i]->spec(), &gpus[j]->spec()) << i << " vs " << j;

  const kernels::Kernel gemm = kernels::make_gemm("gemm", 4096, 8192, 8192, kernels::DType::BF16, 2, 2);
  const double t = gpus[0]->kernel_cost(gemm).seconds;
  EXPECT_EQ(gpus[1]->kernel_cost(gemm).seconds, t);
  EXPECT_NEAR(gpus[2]->kernel_cost(gemm).seconds, 1.5 * t, 1e-9 * t);
  const kernels::Kernel decode = kernels::make_attention_decode("attn", 64, 64 * 4096, 64, 8, 128, kernels::DType::BF16,
                                                                kernels::DType::BF16);
  EXPECT_LT(gpus[3]->kernel_cost(decode).seconds, gpus[0]->kernel_cost(decode).seconds) << "2x HBM bandwidth";
  EXPECT_NE(gpus[4]->kernel_cost(decode).seconds, gpus[5]->kernel_cost(decode).seconds) << "fa3 vs fa4 prices";
}

TEST(GpuModule, RejectsAPayloadWithoutAnExtension) {
  sim::Environment env;
  auto gpu = make_gpu("spec: a100_sxm_80gb\n");
  Launcher launcher("launcher");
  launcher.socket.bind(gpu->socket);
  env.process([&] {
    tlm::tlm_generic_payload p;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    launcher.socket->b_transport(p, delay);
    EXPECT_EQ(p.get_response_status(), tlm::TLM_COMMAND_ERROR_RESPONSE);
  });
  env.run();
}

// The host launches asynchronously: kernel i is issued at prepare + (i+1)*launch and starts when
// both it is issued and the previous kernel is done; the step ends when the GPU is done, plus the
// finish overhead. The expected time is computed here from the kernel costs alone.
TEST(HostCpu, StepTimeFollowsAsynchronousLaunchSemantics) {
  sim::Environment env;
  auto gpu = make_gpu("spec: h100_sxm\ntier: roofline\nkernel_overhead: 3us\n");
  auto host = make_host("prepare_overhead: 400us\nfinish_overhead: 300us\nlaunch_overhead: 15us\n");
  host->gpu_socket.bind(gpu->socket);

  const auto* model = kernels::find_builtin_model("llama-3-8b");
  auto expected_step = [&](const kernels::StepKernels& sk, double* gpu_wait) {
    const auto want = test_support::async_step_time(sk, 400e-6, 15e-6, 300e-6, [&](const kernels::Kernel& k) {
      return kernels::roofline_cost(k, gpu->spec(), 3e-6).seconds;
    });
    *gpu_wait = want.gpu_wait_s;
    return want.seconds;
  };

  // One decode reads all 16 GB of weights (~4.8 ms at 3.35 TB/s) but launches ~356 kernels at
  // 15 us (~5.3 ms): launch-bound. A 4096-token prefill (~66 ms of GEMMs) is GPU-bound.
  kernels::StepBatch decode1;
  decode1.decode_contexts = {600};
  kernels::StepBatch prefill;  // a 4096-token prefill: the GPU dominates
  prefill.prefills = {{4096, 0, true}};
  const auto sk_decode = kernels::decompose_step(*model, decode1, kernels::DType::BF16, kernels::DType::BF16);
  const auto sk_prefill = kernels::decompose_step(*model, prefill, kernels::DType::BF16, kernels::DType::BF16);

  double wait_decode = 0, wait_prefill = 0;
  const double want_decode = expected_step(sk_decode, &wait_decode);
  const double want_prefill = expected_step(sk_prefill, &wait_prefill);
  env.process([&] {
    const double t0 = env.now_seconds();
    const hw::StepTiming a = host->run_step(sk_decode, hw::step_shape(decode1, 1), 0);
    EXPECT_NEAR(env.now_seconds() - t0, want_decode, 1e-9);
    EXPECT_NEAR(sim::to_seconds(a.total), want_decode, 1e-9);
    EXPECT_EQ(a.kernels, sk_decode.pre.size() + sk_decode.post.size() +
                             sk_decode.per_layer.size() * static_cast<std::size_t>(sk_decode.num_layers));
    const double t1 = env.now_seconds();
    const hw::StepTiming b = host->run_step(sk_prefill, hw::step_shape(prefill, 1), 1);
    EXPECT_NEAR(env.now_seconds() - t1, want_prefill, 1e-9);
    // Decode of one sequence is launch-bound (host never waits long); the big prefill is GPU-bound.
    EXPECT_LT(sim::to_seconds(a.gpu_wait), 0.1 * sim::to_seconds(a.launch));
    EXPECT_GT(sim::to_seconds(b.gpu_wait), sim::to_seconds(b.launch));
    EXPECT_NEAR(sim::to_seconds(b.gpu_wait), wait_prefill, 1e-9);
  });
  env.run();
  EXPECT_EQ(host->steps(), 2u);
}

namespace {

// Step time under asynchronous launches, rebuilt from kernel costs: kernel i is issued at
// before + (i+1)*per_launch (a CUDA graph: all at before + graph), starts when issued and the
// previous kernel is done; the step ends when the GPU is done, plus `after`.
struct ExpectedStep {
  double total = 0, gpu_busy = 0, launch = 0;
};
ExpectedStep expected_step(const kernels::StepKernels& sk, const kernels::GpuSpec& spec, double kernel_overhead,
                           double before, double per_launch, double graph, double after) {
  ExpectedStep e;
  double t = before + graph, gpu_free = 0;
  auto one = [&](const kernels::Kernel& k) {
    t += per_launch;
    const double cost = kernels::roofline_cost(k, spec, kernel_overhead).seconds;
    e.gpu_busy += cost;
    gpu_free = std::max(t, gpu_free) + cost;
  };
  for (const auto& k : sk.pre) one(k);
  for (int l = 0; l < sk.num_layers; ++l)
    for (const auto& k : sk.per_layer) one(k);
  for (const auto& k : sk.post) one(k);
  e.launch = t - before;
  e.total = std::max(t, gpu_free) + after;
  return e;
}

// Host phases of one measured configuration, summed straight from the shipped CSV (seconds).
double measured_host_seconds(const std::string& model, int batch, int tp) {
  const auto t = kernels::CsvTable::read_file("data/cpu_overheads/a100.csv");
  for (std::size_t r = 0; r < t.rows(); ++r)
    if (t.cell(r, "model_name") == model && t.required_number(r, "batch_size") == batch &&
        t.required_number(r, "tensor_parallel_degree") == tp)
      return 1e-3 * (t.required_number(r, "schedule_median") + t.required_number(r, "prepare_inputs_e2e_median") +
                     t.required_number(r, "sampler_e2e_median") +
                     t.required_number(r, "process_model_outputs_median"));
  ADD_FAILURE() << "no measurement for " << model;
  return 0;
}

kernels::StepBatch decode_batch(int sequences, std::int64_t context) {
  kernels::StepBatch b;
  b.decode_contexts.assign(static_cast<std::size_t>(sequences), context);
  return b;
}

}  // namespace

// Exactly linear measurements written here: the fitted host must reproduce their phases, so the
// step breakdown is known independently of the fit.
TEST(FittedHost, StepBreakdownFollowsTheMeasuredLinearPhases) {
  const std::string csv = testing::TempDir() + "fitted_host_linear.csv";
  {
    std::ofstream f(csv);
    f << "model_name,batch_size,tensor_parallel_degree,schedule_median,prepare_inputs_e2e_median,"
         "sampler_e2e_median,process_model_outputs_median\n";
    for (const char* m : {"a", "b"})
      for (int tp : {1, 2, 4})
        for (int b : {8, 64, 128})  // ms: schedule 0.05+0.01b+0.02log2(tp), prepare 0.1+0.005b, ...
          f << m << ',' << b << ',' << tp << ',' << 0.05 + 0.01 * b + 0.02 * std::log2(tp) << ','
            << 0.1 + 0.005 * b << ',' << 0.2 + 0.002 * b << ',' << 0.03 + 0.008 * b << '\n';
  }
  sim::Environment env;
  auto gpu = make_gpu("spec: h100_sxm\ntier: roofline\nkernel_overhead: 3us\n");
  auto host = make_host("measurements: " + csv + "\ntp_term: log2\nlaunch_overhead: 5us\n", "fitted");
  host->gpu_socket.bind(gpu->socket);
  const auto* model = kernels::find_builtin_model("llama-3-8b");
  const kernels::StepBatch batch = decode_batch(16, 600);
  const auto sk = kernels::decompose_step(*model, batch, kernels::DType::BF16, kernels::DType::BF16, {2, 1});
  // TP 2, 16 sequences: before = (0.05+0.16+0.02) + (0.1+0.08) ms, after = (0.2+0.032) + (0.03+0.128) ms.
  const double before = 0.41e-3, after = 0.39e-3;
  const ExpectedStep want = expected_step(sk, gpu->spec(), 3e-6, before, 5e-6, 0, after);
  env.process([&] {
    const hw::StepTiming t = host->run_step(sk, hw::step_shape(batch, 2), 0);
    EXPECT_NEAR(sim::to_seconds(t.host_before), before, 1e-9);
    EXPECT_NEAR(sim::to_seconds(t.host_after), after, 1e-9);
    EXPECT_NEAR(sim::to_seconds(t.launch), want.launch, 1e-9);
    EXPECT_NEAR(sim::to_seconds(t.total), want.total, 1e-9);
    EXPECT_FALSE(t.cuda_graph);
  });
  env.run();
}

// With the host fitted to the A100 server's measurements, phi-2 (5.6 GB of fp16 weights) decoding
// on a B200 (7.7 TB/s) is host-bound at batch 8: ~1.2 ms of CPU phases + 4 us per kernel exceed
// the ~1.6 ms of kernels. At batch 128 with 4k-token contexts the KV reads (~170 GB) dominate and
// the step is GPU-bound. Host phases are checked against the measured rows.
TEST(FittedHost, SmallDecodeBatchesAreHostBoundLargeOnesGpuBound) {
  sim::Environment env;
  auto gpu = make_gpu("spec: b200\ntier: roofline\nkernel_overhead: 3us\n");
  auto host = make_host("measurements: a100\nlaunch_overhead: 4us\n", "fitted");
  host->gpu_socket.bind(gpu->socket);
  const auto* model = kernels::find_builtin_model("phi-2");
  ASSERT_NE(model, nullptr);
  const kernels::StepBatch small = decode_batch(8, 512), large = decode_batch(128, 4096);
  const auto sk_small = kernels::decompose_step(*model, small, kernels::DType::FP16, kernels::DType::FP16);
  const auto sk_large = kernels::decompose_step(*model, large, kernels::DType::FP16, kernels::DType::FP16);
  const double measured_small = measured_host_seconds("microsoft/phi-2", 8, 1);
  const double measured_large = measured_host_seconds("microsoft/phi-2", 128, 1);
  env.process([&] {
    const hw::StepTiming a = host->run_step(sk_small, hw::step_shape(small, 1), 0);
    const hw::StepTiming b = host->run_step(sk_large, hw::step_shape(large, 1), 1);
    const double host_a = sim::to_seconds(a.host_before + a.host_after);
    const double host_b = sim::to_seconds(b.host_before + b.host_after);
    EXPECT_NEAR(host_a, measured_small, 0.15 * measured_small);  // within the fit's error
    EXPECT_NEAR(host_b, measured_large, 0.15 * measured_large);
    const ExpectedStep ea = expected_step(sk_small, gpu->spec(), 3e-6, sim::to_seconds(a.host_before), 4e-6, 0,
                                          sim::to_seconds(a.host_after));
    const ExpectedStep eb = expected_step(sk_large, gpu->spec(), 3e-6, sim::to_seconds(b.host_before), 4e-6, 0,
                                          sim::to_seconds(b.host_after));
    EXPECT_NEAR(sim::to_seconds(a.total), ea.total, 1e-9);
    EXPECT_NEAR(sim::to_seconds(b.total), eb.total, 1e-9);
    // Host time = CPU phases + launches; GPU time = the kernels' busy time.
    EXPECT_GT(host_a + sim::to_seconds(a.launch), ea.gpu_busy);
    EXPECT_LT(host_b + sim::to_seconds(b.launch), eb.gpu_busy);
    EXPECT_LT(sim::to_seconds(a.gpu_wait), sim::to_seconds(a.launch));  // the GPU keeps up
    EXPECT_GT(sim::to_seconds(b.gpu_wait), sim::to_seconds(b.launch));  // the host waits
  });
  env.run();
}

// CUDA graphs: a decode step within the captured sizes costs one graph launch and its kernels
// reach the GPU together; a larger decode batch or a step with a prefill launches kernel by kernel.
TEST(FittedHost, CudaGraphsReplaceKernelLaunchesInDecodeSteps) {
  sim::Environment env;
  auto gpu = make_gpu("spec: a100_sxm_80gb\ntier: roofline\nkernel_overhead: 3us\n");
  auto host = make_host(
      "measurements: a100\nlaunch_overhead: 4us\ncuda_graphs: true\ncuda_graph_max_batch_size: 64\n"
      "graph_launch_overhead: 25us\n",
      "fitted");
  host->gpu_socket.bind(gpu->socket);
  const auto* model = kernels::find_builtin_model("phi-2");
  const kernels::StepBatch graphed = decode_batch(8, 512), too_big = decode_batch(65, 512);
  kernels::StepBatch mixed = decode_batch(8, 512);
  mixed.prefills = {{256, 0, true}};
  auto sk = [&](const kernels::StepBatch& b) {
    return kernels::decompose_step(*model, b, kernels::DType::FP16, kernels::DType::FP16);
  };
  const auto sk_graphed = sk(graphed), sk_big = sk(too_big), sk_mixed = sk(mixed);
  env.process([&] {
    const hw::StepTiming a = host->run_step(sk_graphed, hw::step_shape(graphed, 1), 0);
    EXPECT_TRUE(a.cuda_graph);
    EXPECT_NEAR(sim::to_seconds(a.launch), 25e-6, 1e-12);
    const ExpectedStep ea = expected_step(sk_graphed, gpu->spec(), 3e-6, sim::to_seconds(a.host_before), 0, 25e-6,
                                          sim::to_seconds(a.host_after));
    EXPECT_NEAR(sim::to_seconds(a.total), ea.total, 1e-9);
    const hw::StepTiming b = host->run_step(sk_big, hw::step_shape(too_big, 1), 1);
    const hw::StepTiming c = host->run_step(sk_mixed, hw::step_shape(mixed, 1), 2);
    EXPECT_FALSE(b.cuda_graph);
    EXPECT_FALSE(c.cuda_graph);
    EXPECT_NEAR(sim::to_seconds(b.launch), 4e-6 * static_cast<double>(b.kernels), 1e-12);
    EXPECT_NEAR(sim::to_seconds(c.launch), 4e-6 * static_cast<double>(c.kernels), 1e-12);
  });
  env.run();
}

namespace {

// A GPU kind whose prices are pure (so a step launch may keep them) and counted.
struct CountingGpu : hw::GpuModule {
  explicit CountingGpu(const sc_core::sc_module_name& n) : hw::GpuModule(n, 0) {}
  const kernels::GpuSpec& spec() const override { return *kernels::find_builtin_gpu("h100_sxm"); }
  kernels::KernelCost kernel_cost(const kernels::Kernel& k) const override {
    ++priced;
    return {1e-6 * static_cast<double>(k.m), 0.0, 0.0, 0.0, kernels::Bound::Memory, 1.0};
  }
  bool reuses_kernel_costs() const override { return true; }
  mutable int priced = 0;
};

kernels::Kernel sized(const char* name, std::int64_t m, kernels::OpKind op = kernels::OpKind::Gemm) {
  kernels::Kernel k = gemm(m, 1, 1);
  k.name = name;
  k.op = op;
  return k;
}

sc_core::sc_time launch_whole_step(Launcher& launcher, const kernels::StepKernels& step) {
  proto::PooledPayload p(launcher.pool);
  auto& ext = proto::PayloadPool::extension<proto::StepLaunch>(*p);
  ext.kernels = step;
  ext.launch_overhead = sc_core::SC_ZERO_TIME;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  launcher.socket->b_transport(*p, d);
  EXPECT_EQ(p->get_response_status(), tlm::TLM_OK_RESPONSE);
  return ext.finish;
}

}  // namespace

// A step launch prices only the kernels of chunks it has not priced at that position: the same
// chunk object is the same kernels. A chunk made anew with the kernels it had costs a comparison,
// not a price; a changed kernel is priced, and the stream time follows the new prices.
TEST(GpuModule, StepLaunchPricesOnlyKernelsInChunksItHasNotSeen) {
  sim::Environment env;
  CountingGpu gpu("gpu");
  Launcher launcher("launcher");
  launcher.socket.bind(gpu.socket);
  kernels::StepKernels step;
  step.pre = {sized("embedding", 1)};
  step.per_layer = {sized("qkv", 2)};
  step.per_layer.append(kernels::KernelList{sized("attention", 3, kernels::OpKind::AttentionDecode)});
  step.per_layer.append(kernels::KernelList{sized("mlp", 4)});
  step.num_layers = 10;
  step.post = {sized("lm_head", 5)};
  env.process([&] {
    sc_core::sc_time start = sc_core::SC_ZERO_TIME;
    auto run = [&] {  // each step's time on the stream, in microseconds
      const sc_core::sc_time end = launch_whole_step(launcher, step);
      const double us = (end - start).to_seconds() * 1e6;
      start = end;
      return us;
    };
    EXPECT_NEAR(run(), 1 + 10 * (2 + 3 + 4) + 5, 1e-9);
    EXPECT_EQ(gpu.priced, 5);

    EXPECT_NEAR(run(), 96.0, 1e-9);  // the same chunks
    EXPECT_EQ(gpu.priced, 5);

    step.per_layer.replace(1, kernels::make_chunk(std::vector<kernels::Kernel>{
                                  sized("attention", 7, kernels::OpKind::AttentionDecode)}));
    EXPECT_NEAR(run(), 1 + 10 * (2 + 7 + 4) + 5, 1e-9);
    EXPECT_EQ(gpu.priced, 6);  // the new attention chunk only

    step.pre = {sized("embedding", 1)};  // a new chunk, the same kernel: compared, kept
    step.post = {sized("lm_head", 6)};   // a new chunk, another kernel: priced
    EXPECT_NEAR(run(), 1 + 10 * (2 + 7 + 4) + 6, 1e-9);
    EXPECT_EQ(gpu.priced, 7);
  });
  env.run();
  EXPECT_EQ(gpu.kernels_executed(), 4u * (1 + 30 + 1));
}
