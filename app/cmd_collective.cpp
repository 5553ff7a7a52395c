// `kernelsight collective`: the predicted time of one collective on an idle fabric.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>

#include <boost/program_options.hpp>

#include "app/commands.hpp"
#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "base/config/document.hpp"
#include "base/config/units.hpp"

namespace po = boost::program_options;

namespace ks::app {

int cmd_collective(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight collective --topology T --kind K --gpus N --bytes B [options]\n\n"
      "Predicts one collective on an otherwise idle fabric: the collective is decomposed into\n"
      "link transfers on the topology (the same model the simulation uses) and, beside it, the\n"
      "alpha-beta closed form with the route's latency and bottleneck bandwidth between GPUs 0 and 1,\n"
      "both under the NCCL algorithm and protocol (ring/NVLS x LL/LL128/Simple) NCCL's tuning model picks.\n"
      "Sizes follow nccl-tests (bytes per rank). GPUs 0..N-1 take part.\n\noptions");
  std::string topology = "dgx_h100", kind_text = "all_reduce", bytes_text, algo_text = "auto";
  int gpus = 8;
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "topology,t", po::value(&topology)->default_value(topology), "topology kind (kernelsight list -> topology)")(
      "kind,k", po::value(&kind_text)->default_value(kind_text),
      "all_reduce | all_gather | reduce_scatter | all_to_all | send_recv")(
      "gpus,n", po::value(&gpus)->default_value(gpus), "ranks (send_recv: 2, GPU 0 -> GPU 1)")(
      "bytes,b", po::value(&bytes_text), "message size per rank: 1048576, 64MiB, 1GB")(
      "algorithm,a", po::value(&algo_text)->default_value(algo_text), "auto | ring | tree")(
      "set,s", po::value(&sets)->composing(), "topology parameter: --set nvlink_bandwidth=400GB/s (repeatable)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kernelsight collective: " << e.what() << "\n\n" << opts;
    return kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  auto bad = [&](const std::string& what) {
    std::cerr << "kernelsight collective: " << what << "\n";
    return kExitBadInput;
  };
  const auto kind = interconnect::parse_collective_kind(kind_text);
  if (!kind) return bad("unknown --kind '" + kind_text + "' (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv)");
  const auto algo = interconnect::parse_algorithm(algo_text);
  if (!algo) return bad("unknown --algorithm '" + algo_text + "' (auto, ring, tree)");
  if (bytes_text.empty()) return bad("--bytes is required");
  std::optional<double> bytes = config::parse_quantity(bytes_text, config::Dim::Bytes);
  if (!bytes) {
    char* end = nullptr;
    const double v = std::strtod(bytes_text.c_str(), &end);
    if (end == bytes_text.c_str() || *end != '\0' || !(v >= 0) || !std::isfinite(v))
      return bad("--bytes: expected a size such as 1048576 or 64MiB, got '" + bytes_text + "'");
    bytes = v;
  }
  if (gpus < 2) return bad("--gpus must be >= 2");
  if (*kind == interconnect::CollectiveKind::SendRecv && gpus != 2) return bad("send_recv takes --gpus 2");

  try {
    config::Document doc = config::Document::parse("kind: " + topology + "\n", "--topology");
    for (const auto& s : sets) doc.apply_override(s);
    config::Section root = doc.root();
    const auto& entry = interconnect::topology_registry().get(root.kind(), root.mark("kind"), "topology");
    const bool nodes_given = root.has("nodes");  // resolve() fills in defaults
    config::Params p = root.resolve(entry.schema);
    // Enough nodes for the ranks unless --set nodes=... says otherwise.
    const std::int64_t per_node = p.integer("gpus_per_node");
    if (!nodes_given || p.integer("nodes") * per_node < gpus) {
      if (nodes_given)
        return bad("topology has " + std::to_string(p.integer("nodes") * per_node) + " GPUs, --gpus asks for " +
                   std::to_string(gpus));
      doc.apply_override("nodes=" + std::to_string((gpus + per_node - 1) / per_node));
      p = doc.root().resolve(entry.schema);
    }
    doc.check_unused();
    const auto topo = entry.make(p);
    std::vector<int> group(static_cast<std::size_t>(gpus));
    std::iota(group.begin(), group.end(), 0);
    const auto chosen = interconnect::resolve_algorithm(*kind, *algo, gpus, *bytes);
    // The requested algorithm (auto: NCCL's choice, NVLS included) decides the plan.
    const double t = interconnect::idle_collective_time(*topo, *kind, *algo, group, *bytes);
    const auto plan = interconnect::collective_plan(*topo, *kind, *algo, group, *bytes);
    double alpha = 0, beta = 0;
    if (*kind == interconnect::CollectiveKind::SendRecv) {
      alpha = topo->path_latency(0, 1), beta = topo->path_bandwidth(0, 1);
    } else {  // the ring's slowest neighbour route, as the plan is chosen
      beta = INFINITY;
      for (int i = 0; i < gpus; ++i) {
        const int j = (i + 1) % gpus;
        alpha = std::max(alpha, topo->path_latency(i, j));
        beta = std::min(beta, topo->path_bandwidth(i, j));
      }
    }
    const double ab = interconnect::plan_time(plan, *kind, gpus, *bytes, alpha, beta, topo->collective_overhead(),
                                              topo->protocol_costs());
    // nccl-tests bus bandwidth factors: all-reduce 2(n-1)/n, gather/scatter/all-to-all (n-1)/n.
    const double n = gpus;
    const double factor = *kind == interconnect::CollectiveKind::AllReduce ? 2 * (n - 1) / n
                          : *kind == interconnect::CollectiveKind::SendRecv ? 1.0
                                                                            : (n - 1) / n;
    std::printf("topology:        %s (%d node%s x %d GPUs)\n", topology.c_str(), topo->nodes(),
                topo->nodes() > 1 ? "s" : "", topo->gpus_per_node());
    std::printf("collective:      %s, %s, %d GPUs, %s per rank\n",
                std::string(interconnect::collective_kind_name(*kind)).c_str(),
                *kind == interconnect::CollectiveKind::SendRecv ? "point-to-point"
                                                                : std::string(interconnect::algorithm_name(*algo)).c_str(),
                gpus,
                config::format_quantity(*bytes, config::Dim::Bytes).c_str());
    std::printf("plan:            %s   (NCCL's algorithm x protocol choice for this size; fixed latency %.2f us, "
                "+%.2f us a step, bandwidth x%.3g)\n",
                std::string(interconnect::plan_name(plan)).c_str(), plan.fixed_latency * 1e6,
                plan.effect.extra_latency * 1e6, plan.effect.bandwidth_factor);
    const double copy = interconnect::local_copy_time(*kind, chosen, gpus, *bytes, topo->protocol_costs());
    if (copy > 0 && !plan.custom) std::printf("local copy:      %.2f us   (each rank's own chunk, once)\n", copy * 1e6);
    std::printf("predicted time:  %.2f us   (link transfers on the topology)\n", t * 1e6);
    std::printf("alpha-beta:      %.2f us   (uniform fabric, the ring's slowest route)\n", ab * 1e6);
    std::printf("algorithm bw:    %.2f GB/s\n", *bytes / t / 1e9);
    std::printf("bus bw:          %.2f GB/s\n", *bytes / t * factor / 1e9);
    return kExitOk;
  } catch (const config::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace ks::app
