#include "app/outputs.hpp"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "kernels/gpu_spec.hpp"
#include "kernels/roofline.hpp"
#include "base/config/error.hpp"
#include "base/config/units.hpp"

namespace ks::app {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// `,` then the value as printf's %.<digits>f writes it (to_chars is specified to match printf,
// and is several times faster than glibc's arbitrary-precision printf).
void append_fixed(std::string& out, double v, int digits) {
  char buf[400];  // %f of any double fits
  buf[0] = ',';
  const auto end = std::to_chars(buf + 1, buf + sizeof buf, v, std::chars_format::fixed, digits).ptr;
  out.append(buf, end);
}

template <typename Int>
void append_int(std::string& out, Int v, bool comma = true) {
  char buf[24];
  buf[0] = ',';
  out.append(buf + (comma ? 0 : 1), std::to_chars(buf + 1, buf + sizeof buf, v).ptr);
}

}  // namespace

serving::Slo parse_slo(const std::string& text) {
  const config::SourceMark mark{"--slo " + text};
  serving::Slo slo;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw config::ConfigError(mark, "slo", "expected metric=limit items such as 'ttft=200ms,tpot=50ms', got '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    std::optional<double> seconds = config::parse_quantity(value, config::Dim::Time);
    if (!seconds) {
      try {
        std::size_t used = 0;
        seconds = std::stod(value, &used) / 1000.0;  // bare number: milliseconds
        if (used != value.size()) seconds.reset();
      } catch (const std::exception&) {
      }
    }
    if (!seconds || *seconds <= 0)
      throw config::ConfigError(mark, "slo." + key, "expected a positive time such as '200ms', got '" + value + "'");
    if (key == "ttft") slo.ttft_s = *seconds;
    else if (key == "tpot") slo.tpot_s = *seconds;
    else if (key == "e2el") slo.e2el_s = *seconds;
    else throw config::ConfigError(mark, "slo." + key, "unknown metric '" + key + "' (known: ttft, tpot, e2el)");
    begin = end + 1;
  }
  return slo;
}

std::string requests_csv(const Simulation& sim) {
  std::string out =
      "id,replica,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_tokens,output_tokens,generated_tokens,"
      "cached_tokens,preemptions,prefix_group,ttft_ms,tpot_ms,e2el_ms\n";
  out.reserve(out.size() + sim.requests().size() * 180);
  for (const serving::Request& r : sim.requests()) {
    const bool done = r.finish_s >= 0;
    const double ttft = r.first_token_s >= 0 ? (r.first_token_s - r.arrival_s) * 1e3 : -1;
    const double e2el = done ? (r.finish_s - r.arrival_s) * 1e3 : -1;
    const double tpot = done && r.generated > 1 ? (e2el - ttft) / static_cast<double>(r.generated - 1) : -1;
    append_int(out, r.id, false);
    append_int(out, r.replica);
    for (const double s : {r.arrival_s, r.first_scheduled_s, r.first_token_s, r.finish_s}) append_fixed(out, s, 9);
    for (const std::int64_t n : {r.prompt_tokens, r.output_tokens, r.generated, std::max<std::int64_t>(0, r.cached_tokens)})
      append_int(out, n);
    append_int(out, r.preemptions);
    append_int(out, r.prefix_group);
    for (const double ms : {ttft, tpot, e2el}) append_fixed(out, ms, 6);
    out += '\n';
  }
  return out;
}

std::string kernels_csv(const Simulation& sim) {
  std::map<proto::KernelClassKey, proto::KernelClassStats> total;
  double gpu_time = 0;
  for (const proto::KernelStatsTable* g : sim.gpu_stats()) {
    gpu_time += g->busy_seconds();
    for (const auto& [key, s] : g->rows()) total[key].merge(s);
  }
  std::string out =
      "kernel,op,phase,launches,time_s,share,mean_us,flops,bytes,achieved_tflops,achieved_gbps,bound,roofline_s,"
      "efficiency\n";
  for (const auto& [key, s] : total) {
    std::size_t bound = 0;  // the bound most launches hit
    for (std::size_t i = 1; i < s.bound_counts.size(); ++i)
      if (s.bound_counts[i] > s.bound_counts[bound]) bound = i;
    const double t = s.busy_seconds();
    out += key.name + "," + std::string(kernels::op_name(key.op)) + "," + std::string(kernels::phase_name(key.phase)) +
           "," + std::to_string(s.launches) + "," + fmt("%.9f", t) + "," + fmt("%.6f", gpu_time > 0 ? t / gpu_time : 0) +
           "," + fmt("%.3f", s.launches ? t / static_cast<double>(s.launches) * 1e6 : 0) + "," + fmt("%.6e", s.flops()) +
           "," + fmt("%.6e", s.bytes()) + "," + fmt("%.3f", t > 0 ? s.flops() / t / 1e12 : 0) + "," +
           fmt("%.3f", t > 0 ? s.bytes() / t / 1e9 : 0) + "," +
           std::string(kernels::bound_name(static_cast<kernels::Bound>(bound))) + "," + fmt("%.9f", s.roofline_seconds()) +
           "," + fmt("%.4f", t > 0 ? s.roofline_seconds() / t : 0) + "\n";
  }
  // Pipeline sends: time from issue to arrival summed over every rank's send (link time, not GPU time).
  std::map<kernels::Phase, hw::TransferStats> sends;
  for (const hw::PipelineLink* link : sim.pipeline_links())
    for (const auto& [phase, st] : link->stats()) {
      sends[phase].transfers += st.transfers;
      sends[phase].seconds += st.seconds;
      sends[phase].bytes += st.bytes;
    }
  for (const auto& [phase, st] : sends) {
    const double t = st.seconds;
    out += "pp_send_recv,send_recv," + std::string(kernels::phase_name(phase)) + "," + std::to_string(st.transfers) +
           "," + fmt("%.9f", t) + "," + fmt("%.6f", gpu_time > 0 ? t / gpu_time : 0) + "," +
           fmt("%.3f", st.transfers ? t / static_cast<double>(st.transfers) * 1e6 : 0) + ",0.000000e+00," +
           fmt("%.6e", st.bytes) + ",0.000," + fmt("%.3f", t > 0 ? st.bytes / t / 1e9 : 0) + ",communication,0,0\n";
  }
  return out;
}

void add_goodput(nlohmann::json& summary, const Simulation& sim, const serving::Slo& slo) {
  if (!slo.any()) return;
  const std::int64_t good = serving::good_requests(sim.metrics().requests(), slo);
  if (slo.ttft_s > 0) summary["slo_ttft_ms"] = slo.ttft_s * 1e3;
  if (slo.tpot_s > 0) summary["slo_tpot_ms"] = slo.tpot_s * 1e3;
  if (slo.e2el_s > 0) summary["slo_e2el_ms"] = slo.e2el_s * 1e3;
  summary["good_requests"] = good;
  const double duration = summary.value("duration_s", 0.0);
  summary["request_goodput"] = duration > 0 ? static_cast<double>(good) / duration : 0.0;
}

}  // namespace ks::app
