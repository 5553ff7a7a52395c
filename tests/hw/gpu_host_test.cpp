// The GPU target's stream semantics and the host's step timing over TLM.
#include <gtest/gtest.h>

#include <algorithm>

#include "hw/gpu/gpu_module.hpp"
#include "hw/host/host_cpu.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"
#include "sc_modules/config/document.hpp"
#include "sc_modules/sim/sim.hpp"
#include "sc_modules/tlm/payload_pool.hpp"

using namespace ks;

namespace {

config::Params resolve(const std::string& yaml, const config::Schema& schema) {
  static std::vector<config::Document> docs;
  docs.push_back(config::Document::parse(yaml, "test.yaml"));
  return docs.back().root().resolve(schema);
}

std::unique_ptr<hw::GpuModule> make_gpu(const std::string& yaml) {
  const auto& entry = hw::gpu_registry().get("catalog", {}, "gpu");
  return entry.make({"gpu0", 0, resolve(yaml, entry.schema)});
}

std::unique_ptr<hw::HostCpu> make_host(const std::string& yaml) {
  const auto& entry = hw::host_registry().get("fixed_overhead", {}, "host");
  return entry.make("host", resolve(yaml, entry.schema));
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
  EXPECT_EQ(gpu->kernel_stats().at("test_gemm").launches, 6u);
  EXPECT_EQ(launcher.pool.allocated(), 1u);  // one payload, reused
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
    double t = 400e-6, gpu_free = 0;
    auto one = [&](const kernels::Kernel& k) {
      t += 15e-6;
      const double cost = kernels::roofline_cost(k, gpu->spec(), 3e-6).seconds;
      gpu_free = std::max(t, gpu_free) + cost;
    };
    for (const auto& k : sk.pre) one(k);
    for (int l = 0; l < sk.num_layers; ++l)
      for (const auto& k : sk.per_layer) one(k);
    for (const auto& k : sk.post) one(k);
    *gpu_wait = std::max(0.0, gpu_free - t);
    return std::max(t, gpu_free) + 300e-6;
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
    const hw::StepTiming a = host->execute_step(sk_decode, 0);
    EXPECT_NEAR(env.now_seconds() - t0, want_decode, 1e-9);
    EXPECT_NEAR(sim::to_seconds(a.total), want_decode, 1e-9);
    EXPECT_EQ(a.kernels, sk_decode.pre.size() + sk_decode.post.size() +
                             sk_decode.per_layer.size() * static_cast<std::size_t>(sk_decode.num_layers));
    const double t1 = env.now_seconds();
    const hw::StepTiming b = host->execute_step(sk_prefill, 1);
    EXPECT_NEAR(env.now_seconds() - t1, want_prefill, 1e-9);
    // Decode of one sequence is launch-bound (host never waits long); the big prefill is GPU-bound.
    EXPECT_LT(sim::to_seconds(a.gpu_wait), 0.1 * sim::to_seconds(a.launch));
    EXPECT_GT(sim::to_seconds(b.gpu_wait), sim::to_seconds(b.launch));
    EXPECT_NEAR(sim::to_seconds(b.gpu_wait), wait_prefill, 1e-9);
  });
  env.run();
  EXPECT_EQ(host->steps(), 2u);
}
