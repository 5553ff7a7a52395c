// `kernelsight validate-collectives`: measured NCCL/XLA collectives (data/collectives) against the
// interconnect model. Link parameters and NCCL protocol costs are fitted per setup, collective
// kind and link type from that setup's single-link-type configurations, checked two ways:
// (1) 2-fold by message size (fit on every other size of each configuration, predict the others)
// and (2) configurations that mix link types (multi-node, cross-pair rings) are never fitted,
// only predicted by the link simulation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "app/commands.hpp"
#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "base/config/document.hpp"
#include "base/config/units.hpp"
#include "base/util/atomic_file.hpp"

namespace ks::app {
namespace {

using interconnect::CollectiveKind;
using interconnect::LinkType;

struct Row {
  std::string source, setup, gpu, collective;
  CollectiveKind kind;
  int n, per_node, groups;
  double bytes, measured;  // s
  int fold = 0;
  bool mixed = false;
  LinkType link = LinkType::NVLink;
  double predicted = 0, predicted_heldout = 0;
};

struct Setup {
  std::string preset;
  int gpus_per_node;
  std::map<std::string, double> params;  // fitted: collective_overhead, <type>_latency, <type>_bandwidth
};

std::map<std::string, Setup> setups() {
  return {{"a100_dgx", {"dgx_a100", 8, {}}},
          {"a100_pairwise_nvlink", {"pcie_pairwise_nvlink", 4, {}}},
          {"a40_pairwise_nvlink", {"pcie_pairwise_nvlink", 8, {}}},
          {"b200_hgx", {"hgx_b200", 8, {}}}};
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  return out;
}

// GPUs of each concurrent group: groups of n, per_node of them on each node.
std::vector<std::vector<int>> groups_of(const Row& r, int gpus_per_node) {
  std::vector<std::vector<int>> gs;
  if (r.kind == CollectiveKind::SendRecv && r.per_node == 1 && r.setup.find("pairwise") != std::string::npos)
    return {{0, 2}};  // "one device per node" on a pairwise box: GPUs of different pairs
  for (int g = 0; g < r.groups; ++g) {
    std::vector<int> group;
    for (int i = 0; i < r.n; ++i) {
      const int node = (g * r.n + i) / r.per_node;
      group.push_back(node * gpus_per_node + (g * r.n + i) % r.per_node);
    }
    gs.push_back(group);
  }
  return gs;
}

bool is_time(const std::string& key) {
  return key.find("latency") != std::string::npos || key == "collective_overhead";
}

// A parameter as a YAML value: times and bandwidths with their unit, the LL fraction bare.
std::string format_param(const std::string& key, double v) {
  if (key == "ll_bandwidth_fraction") {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
  }
  return config::format_quantity(v, is_time(key) ? config::Dim::Time : config::Dim::Bandwidth);
}

std::unique_ptr<interconnect::Topology> build(const Setup& s, int nodes) {
  std::string yaml = "kind: " + s.preset + "\nnodes: " + std::to_string(nodes) +
                     "\ngpus_per_node: " + std::to_string(s.gpus_per_node) + "\n";
  config::Document doc = config::Document::parse(yaml, "<validation>");
  for (const auto& [k, v] : s.params) doc.apply_override(k + "=" + format_param(k, v));
  const auto& entry = interconnect::topology_registry().get(s.preset, {}, "topology");
  return entry.make(doc.root().resolve(entry.schema));
}

// A preset's default link parameters (what a scenario gets without overrides).
config::Params preset_defaults(const std::string& preset) {
  config::Document doc = config::Document::parse("kind: " + preset + "\n", "<validation>");
  const auto& entry = interconnect::topology_registry().get(preset, {}, "topology");
  return doc.root().resolve(entry.schema);
}

int nodes_for(const Row& r, int gpus_per_node) {
  int max_gpu = 0;
  for (const auto& g : groups_of(r, gpus_per_node))
    for (int x : g) max_gpu = std::max(max_gpu, x);
  return max_gpu / gpus_per_node + 1;
}

double simulate(const Row& r, const Setup& s) {
  auto topo = std::shared_ptr<interconnect::Topology>(build(s, nodes_for(r, s.gpus_per_node)));
  interconnect::FabricModel fabric(topo);
  double t = 0;
  for (const auto& g : groups_of(r, s.gpus_per_node))
    t = std::max(t, fabric.collective(r.kind, interconnect::CollectiveAlgorithm::Ring, g, r.bytes, 0).finish);
  return t;
}

// Steps and bytes per step of the ring algorithm (the features of the alpha-beta fit).
std::pair<double, double> steps_chunk(const Row& r) {
  const auto [steps, chunk] =
      interconnect::steps_and_chunk(r.kind, interconnect::CollectiveAlgorithm::Ring, r.kind == CollectiveKind::SendRecv ? 2 : r.n, r.bytes);
  return {steps, chunk};
}

// Bytes of its own chunk a rank copies locally (the fit's local-copy feature).
double local_bytes(const Row& r) {
  return interconnect::local_copy_bytes(r.kind, interconnect::CollectiveAlgorithm::Ring,
                                        r.kind == CollectiveKind::SendRecv ? 2 : r.n, r.bytes);
}

// Least squares on relative error with non-negative coefficients (drops a negative one, refits).
std::vector<double> fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                        const std::vector<const Row*>& rows) {
  const std::size_t k = x.empty() ? 0 : x[0].size();
  std::vector<bool> active(k, true);
  for (int round = 0; round < static_cast<int>(k); ++round) {
    std::vector<std::size_t> idx;
    for (std::size_t j = 0; j < k; ++j)
      if (active[j]) idx.push_back(j);
    const std::size_t m = idx.size();
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double w = 1.0 / (rows[i]->measured * rows[i]->measured);
      for (std::size_t p = 0; p < m; ++p) {
        for (std::size_t q = 0; q < m; ++q) a[p][q] += w * x[i][idx[p]] * x[i][idx[q]];
        a[p][m] += w * x[i][idx[p]] * y[i];
      }
    }
    for (std::size_t c = 0; c < m; ++c) {  // Gauss-Jordan with partial pivoting
      std::size_t piv = c;
      for (std::size_t r = c + 1; r < m; ++r)
        if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
      std::swap(a[c], a[piv]);
      if (std::fabs(a[c][c]) < 1e-300) continue;
      for (std::size_t r = 0; r < m; ++r) {
        if (r == c) continue;
        const double f = a[r][c] / a[c][c];
        for (std::size_t q = c; q <= m; ++q) a[r][q] -= f * a[c][q];
      }
    }
    std::vector<double> theta(k, 0);
    bool ok = true;
    for (std::size_t p = 0; p < m; ++p) {
      theta[idx[p]] = std::fabs(a[p][p]) < 1e-300 ? 0 : a[p][m] / a[p][p];
      if (theta[idx[p]] < 0) {
        active[idx[p]] = false;
        ok = false;
      }
    }
    if (ok) return theta;
  }
  return std::vector<double>(k, 0);
}

const char* type_key(LinkType t) {
  return t == LinkType::NVLink ? "nvlink" : t == LinkType::PCIe ? "pcie" : "ib";
}

// The two-protocol α–β form of one link type, linear once each row's protocol is known:
// t = overhead + steps * (alpha + [Simple] delta) + steps * chunk / (beta * [LL] e).
// `known` holds (overhead, delta) when they come from the NVLink fit (features then only alpha,
// 1/beta). Rows switch to their faster protocol and the fit repeats until no row switches, from
// several starting splits (every size below a threshold on LL); the LL fraction e is a grid
// over the range NCCL's tuner assumes.
struct LinkFit {
  double overhead = 0, alpha = 0, inv_beta = 0, delta = 0, inv_local = 0, e = 1, loss = INFINITY;
};

LinkFit fit_link(const std::vector<const Row*>& rows, const LinkFit* known) {
  // The local copy (bytes/n) separates from the link traffic ((n-1)/n) only across group sizes;
  // with one size it stays free.
  std::set<int> group_sizes;
  for (const Row* r : rows) group_sizes.insert(r->n);
  const bool several_sizes = group_sizes.size() > 1;
  auto features = [&](const Row& r, bool ll, double e) {
    const auto [steps, chunk] = steps_chunk(r);
    const double v = steps * chunk / (ll ? e : 1.0);
    if (known) return std::vector<double>{steps, v};
    if (!several_sizes) return std::vector<double>{1.0, steps, v, ll ? 0.0 : steps};
    return std::vector<double>{1.0, steps, v, ll ? 0.0 : steps, local_bytes(r)};
  };
  auto offset = [&](const Row& r, bool ll) {
    return known ? known->overhead + known->inv_local * local_bytes(r) +
                       (ll ? 0.0 : steps_chunk(r).first * known->delta)
                 : 0.0;
  };
  auto time = [&](const Row& r, bool ll, double e, const std::vector<double>& th) {
    const auto x = features(r, ll, e);
    double t = offset(r, ll);
    for (std::size_t j = 0; j < x.size(); ++j) t += x[j] * th[j];
    return t;
  };
  std::vector<double> sizes;
  for (const Row* r : rows) sizes.push_back(r->bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  LinkFit best;
  // NCCL's own tuner rates LL at 1/4 to 1/3 of Simple's bandwidth and LL128 at 0.92.
  std::vector<double> grid{known ? known->e : 0.25};
  while (!known && grid.back() < 0.999) grid.push_back(grid.back() + 0.05);
  for (double e : grid)
    for (std::size_t start = 0; start <= sizes.size(); start += 3) {
      const double threshold = start < sizes.size() ? sizes[start] : INFINITY;
      std::vector<bool> ll;
      for (const Row* r : rows) ll.push_back(r->bytes < threshold);
      std::vector<double> th;
      for (int round = 0; round < 30; ++round) {
        std::vector<std::vector<double>> x;
        std::vector<double> y;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          x.push_back(features(*rows[i], ll[i], e));
          y.push_back(rows[i]->measured - offset(*rows[i], ll[i]));
        }
        th = fit(x, y, rows);
        bool changed = false;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const bool faster_ll = time(*rows[i], true, e, th) < time(*rows[i], false, e, th);
          changed = changed || faster_ll != ll[i];
          ll[i] = faster_ll;
        }
        if (!changed) break;
      }
      double loss = 0;
      for (const Row* r : rows) {
        const double t = std::min(time(*r, true, e, th), time(*r, false, e, th));
        loss += (t - r->measured) * (t - r->measured) / (r->measured * r->measured);
      }
      if (loss < best.loss) {
        best.loss = loss, best.e = e;
        if (known) {
          best.overhead = known->overhead, best.delta = known->delta, best.inv_local = known->inv_local;
          best.alpha = th[0], best.inv_beta = th[1];
        } else {
          best.overhead = th[0], best.alpha = th[1], best.inv_beta = th[2], best.delta = th[3];
          best.inv_local = several_sizes ? th[4] : 0.0;
        }
      }
    }
  return best;
}

// Fits one setup's parameters from its single-link-type rows: overhead, protocol costs and the
// NVLink latency and bandwidth from the NVLink rows, then each other link type's latency and
// bandwidth with those held.
Setup fit_setup(Setup s, const std::vector<const Row*>& rows) {
  auto of_type = [&](LinkType t) {
    std::vector<const Row*> out;
    for (const Row* r : rows)
      if (r->link == t) out.push_back(r);
    return out;
  };
  const LinkFit nv = fit_link(of_type(LinkType::NVLink), nullptr);
  s.params["collective_overhead"] = nv.overhead;
  s.params["simple_step_latency"] = nv.delta;
  s.params["ll_bandwidth_fraction"] = nv.e;
  s.params["local_copy_bandwidth"] = nv.inv_local > 0 ? 1.0 / nv.inv_local : 0.0;
  s.params["nvlink_latency"] = std::max(nv.alpha, 1e-9);
  if (nv.inv_beta > 0) s.params["nvlink_bandwidth"] = 1.0 / nv.inv_beta;
  for (LinkType t : {LinkType::PCIe, LinkType::InfiniBand}) {
    const auto list = of_type(t);
    if (list.empty()) continue;
    const LinkFit f = fit_link(list, &nv);
    // IB: a GPU-to-GPU route crosses two NIC-switch hops, each with ib_latency.
    s.params[std::string(type_key(t)) + "_latency"] = t == LinkType::InfiniBand ? f.alpha / 2 : f.alpha;
    if (f.inv_beta > 0) s.params[std::string(type_key(t)) + "_bandwidth"] = 1.0 / f.inv_beta;
  }
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string pct(double x) {
  if (std::isnan(x)) return "–";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}

}  // namespace

int cmd_validate_collectives(const std::vector<std::string>& args) {
  std::string data = "data/collectives/collectives.csv", out, rows_out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "kernelsight validate-collectives [--data FILE] [--out FILE.md] [--rows FILE.csv]\n\n"
                   "Fits link parameters per setup to the measured collectives and prints measured vs\n"
                   "predicted (median relative error for messages >= 1 MiB and below); --out writes the\n"
                   "report as Markdown (docs/validation-collectives.md); --rows writes every row's measured\n"
                   "and predicted times as CSV.\n";
      return kExitOk;
    }
    if ((args[i] == "--data" || args[i] == "--out" || args[i] == "--rows") && i + 1 < args.size()) {
      (args[i] == "--data" ? data : args[i] == "--out" ? out : rows_out) = args[i + 1];
      ++i;
      continue;
    }
    std::cerr << "kernelsight validate-collectives: unexpected argument '" << args[i] << "'\n";
    return kExitBadInput;
  }
  std::ifstream in(data);
  if (!in) {
    std::cerr << "error: " << data << ": cannot open\n";
    return kExitBadInput;
  }
  auto all_setups = setups();
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    const auto c = split(line);
    Row r;
    const auto kind = c.size() == 9 ? interconnect::parse_collective_kind(c[3]) : std::nullopt;
    bool ok = kind && all_setups.count(c[1]) != 0;
    try {
      if (ok) {
        r.source = c[0], r.setup = c[1], r.gpu = c[2], r.collective = c[3], r.kind = *kind;
        r.n = std::stoi(c[4]), r.per_node = std::stoi(c[5]), r.groups = std::stoi(c[6]);
        r.bytes = std::stod(c[7]), r.measured = std::stod(c[8]) * 1e-6;
        const bool send_recv = r.kind == CollectiveKind::SendRecv;
        ok = r.n >= 2 && r.per_node >= 1 && r.per_node <= r.n && r.groups >= 1 && r.bytes > 0 && r.measured > 0 &&
             (!send_recv || r.n == 2);
      }
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) {
      std::cerr << "error: " << data << ":" << lineno << ": expected source,setup,gpu,collective,num_workers,"
                << "devices_per_node,groups,size_bytes,time_us with a known setup and collective, "
                   "num_workers >= 2 (send_recv: 2), 1 <= devices_per_node <= num_workers, groups >= 1, "
                   "positive size and time\n";
      return kExitBadInput;
    }
    rows.push_back(r);
  }

  // Classify: the link types the ring's neighbour routes cross.
  std::map<std::string, std::vector<Row*>> by_config;
  for (Row& r : rows) {
    const Setup& s = all_setups.at(r.setup);
    auto topo = build(s, nodes_for(r, s.gpus_per_node));
    std::set<LinkType> types;
    for (const auto& g : groups_of(r, s.gpus_per_node))
      for (std::size_t i = 0; i < g.size(); ++i)
        for (int l : topo->route(g[i], g[(i + 1) % g.size()])) types.insert(topo->links()[static_cast<std::size_t>(l)].type);
    // A NIC attach link (PCIe type, GPUDirect) does not make an IB route mixed.
    if (types.count(LinkType::InfiniBand)) types.erase(LinkType::PCIe);
    r.mixed = types.size() != 1;
    r.link = *types.begin();
    by_config[r.setup + "/" + r.collective + "/" + std::to_string(r.n) + "/" + std::to_string(r.per_node) + "/" +
              std::to_string(r.groups)]
        .push_back(&r);
  }
  // A setup whose inter-node data is all there is for a link type still needs both types fitted:
  // an IB configuration with more than one GPU per node mixes NVLink and IB, so it is held out.
  for (auto& [key, list] : by_config) {
    std::sort(list.begin(), list.end(), [](const Row* a, const Row* b) { return a->bytes < b->bytes; });
    for (std::size_t i = 0; i < list.size(); ++i) list[i]->fold = static_cast<int>(i % 2);
  }

  // Parameters per setup and collective kind: NCCL picks protocols and channel counts per
  // collective, and point-to-point send/recv runs another code path than the ring collectives
  // (the cross-pair send/recv of a100_pairwise_nvlink slows from 7.6 GB/s at 1 MiB to 1.8 GB/s at
  // 16 MiB, which no all-reduce ring sees). A link type a kind has no single-link data for keeps
  // the preset's spec-derived value rather than borrowing another kind's fit.
  std::map<std::string, Setup> fitted;
  auto fit_for = [&](const std::string& name, const std::string& coll, int fold) {
    std::vector<const Row*> own;
    for (const Row& r : rows)
      if (r.setup == name && r.collective == coll && !r.mixed && (fold < 0 || r.fold == fold)) own.push_back(&r);
    return fit_setup(all_setups.at(name), own);
  };
  for (Row& r : rows) {
    const std::string key = r.setup + "/" + r.collective;
    if (!fitted.count(key)) fitted[key] = fit_for(r.setup, r.collective, -1);
    r.predicted = simulate(r, fitted[key]);
    // Held out: pure rows predicted by the fit on the other fold; mixed rows were never fitted.
    r.predicted_heldout = r.mixed ? r.predicted : simulate(r, fit_for(r.setup, r.collective, 1 - r.fold));
  }

  std::ostringstream md;
  md << "# Validation: collectives\n\n"
        "Generated by `scripts/validate_collectives.sh` (`kernelsight validate-collectives --out "
        "docs/validation-collectives.md`) from `data/collectives/collectives.csv` (see "
        "`data/collectives/README.md` for sources and licences). Do not edit by hand.\n\n"
        "**Method.** Every prediction is the link-level simulation (`FabricModel`: ring collectives "
        "decomposed into transfers on the setup's topology preset, under the NCCL protocol — low-latency "
        "LL or Simple — that the α–β estimate picks for the size). Per setup and collective kind, a "
        "per-collective overhead, the protocol costs (LL's fraction of the link bandwidth, on a grid "
        "from 0.25 to 1 as NCCL's tuner assumes; Simple's added latency per step), the bandwidth at which a "
        "rank's kernel copies its own chunk (once per collective; what makes bus bandwidth grow with the "
        "rank count) and a latency and bandwidth per link type are fitted by least squares on relative error, each row on its faster "
        "protocol, using only configurations whose ring crosses one link type. A link type a kind has "
        "no such configuration for keeps the preset's spec-derived value (marked *(preset)*). "
        "*Held-out* errors: those configurations are predicted by a fit on every other message size "
        "(2-fold by size); configurations that mix link types (two-node rings, cross-pair rings) are "
        "never fitted and only predicted. Error = |predicted − measured| / measured; medians over "
        "rows.\n\n";
  md << "## Fitted parameters\n\n| setup / collective | topology | overhead | LL bw fraction | Simple step latency | local copy bw | NVLink latency | NVLink bw | PCIe latency | PCIe bw | IB latency | IB bw |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  auto q = [](const Setup& s, const std::string& k, config::Dim d) {
    auto it = s.params.find(k);
    if (it != s.params.end() && k == "local_copy_bandwidth" && it->second <= 0) return std::string("free");
    return it == s.params.end() ? std::string("(preset)") : config::format_quantity(d == config::Dim::Time ? std::round(it->second * 1e8) / 1e8 : std::round(it->second / 1e8) * 1e8, d);
  };
  for (const auto& [name, s] : fitted)
    md << "| " << name << " | " << s.preset << " | " << q(s, "collective_overhead", config::Dim::Time) << " | "
       << format_param("ll_bandwidth_fraction", s.params.at("ll_bandwidth_fraction")) << " | "
       << q(s, "simple_step_latency", config::Dim::Time) << " | " << q(s, "local_copy_bandwidth", config::Dim::Bandwidth)
       << " | " << q(s, "nvlink_latency", config::Dim::Time) << " | " << q(s, "nvlink_bandwidth", config::Dim::Bandwidth) << " | "
       << q(s, "pcie_latency", config::Dim::Time) << " | " << q(s, "pcie_bandwidth", config::Dim::Bandwidth) << " | "
       << q(s, "ib_latency", config::Dim::Time) << " | " << q(s, "ib_bandwidth", config::Dim::Bandwidth) << " |\n";

  md << "\n## Errors by configuration\n\n| setup | collective | GPUs | per node | groups | links | rows | held-out ≥ 1 MiB | held-out < 1 MiB | in-sample ≥ 1 MiB | in-sample < 1 MiB |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> all_big, all_small, in_big, in_small;
  for (const auto& [key, list] : by_config) {
    std::vector<double> hb, hs, ib, is;
    for (const Row* r : list) {
      const double eh = std::fabs(r->predicted_heldout - r->measured) / r->measured;
      const double ei = std::fabs(r->predicted - r->measured) / r->measured;
      (r->bytes >= 1048576 ? hb : hs).push_back(eh);
      (r->bytes >= 1048576 ? ib : is).push_back(ei);
    }
    all_big.insert(all_big.end(), hb.begin(), hb.end());
    all_small.insert(all_small.end(), hs.begin(), hs.end());
    in_big.insert(in_big.end(), ib.begin(), ib.end());
    in_small.insert(in_small.end(), is.begin(), is.end());
    const Row& r = *list.front();
    md << "| " << r.setup << " | " << r.collective << " | " << r.n << " | " << r.per_node << " | " << r.groups << " | "
       << (r.mixed ? "mixed (never fitted)" : interconnect::link_type_name(r.link)) << " | " << list.size() << " | "
       << pct(median(hb)) << " | " << pct(median(hs)) << " | " << pct(median(ib)) << " | " << pct(median(is)) << " |\n";
  }
  char summary[512];
  std::snprintf(summary, sizeof summary,
                "\n## Summary\n\n| | ≥ 1 MiB (target 10%%) | < 1 MiB (target 25%%) |\n|---|---|---|\n"
                "| held-out median error | %s (%zu rows) | %s (%zu rows) |\n| in-sample median error | %s | %s |\n",
                pct(median(all_big)).c_str(), all_big.size(), pct(median(all_small)).c_str(), all_small.size(),
                pct(median(in_big)).c_str(), pct(median(in_small)).c_str());
  md << summary;

  md << "\n## Measured vs predicted (held out), selected sizes\n\n| setup | collective | GPUs | per node | groups | size | measured | predicted | error |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& [key, list] : by_config)
    for (const Row* r : list) {
      const double lb = std::log2(r->bytes);
      if (std::fabs(lb - std::round(lb)) > 0.05 || (static_cast<int>(std::round(lb)) % 4) != 0) continue;
      char b[256];
      std::snprintf(b, sizeof b, "| %s | %s | %d | %d | %d | %s | %.1f us | %.1f us | %+.1f%% |\n", r->setup.c_str(),
                    r->collective.c_str(), r->n, r->per_node, r->groups,
                    config::format_quantity(std::round(r->bytes), config::Dim::Bytes).c_str(), r->measured * 1e6,
                    r->predicted_heldout * 1e6, 100 * (r->predicted_heldout - r->measured) / r->measured);
      md << b;
    }
  // The presets' defaults are the all-reduce fits (what a TP simulation sends); dgx_h100, with no
  // measurement, takes the A100 and B200 fits carried across generations: the mean of their
  // fitted-to-spec NVLink bandwidth ratios times the H100 spec, their mean latency and overhead.
  md << "\n## Topology preset defaults\n\nThe presets take these fits as their defaults (all-reduce: "
        "what tensor parallelism sends), so a scenario without overrides uses them. `dgx_h100` has no "
        "measurement: its NVLink and local copy bandwidths are the H100 NVLink spec (450 GB/s per direction) times the mean "
        "fitted-to-spec ratio of A100 (300 GB/s) and B200 (900 GB/s); its latency and overhead are the "
        "means of those two fits. *agrees* = the preset's default is within 1% (or 10 ns) of the fit; "
        "parameters without data keep their spec-derived defaults.\n\n"
        "| preset | parameter | default | fit on all rows | agrees |\n|---|---|---|---|---|\n";
  const auto& a100 = fitted.at("a100_dgx/all_reduce").params;
  const auto& b200 = fitted.at("b200_hgx/all_reduce").params;
  auto mean_of = [&](const std::string& k) { return 0.5 * (a100.at(k) + b200.at(k)); };
  const std::map<std::string, std::map<std::string, double>> targets = {
      {"dgx_a100", a100},
      {"pcie_pairwise_nvlink", fitted.at("a100_pairwise_nvlink/all_reduce").params},
      {"hgx_b200", b200},
      {"dgx_h100",
       {{"collective_overhead", mean_of("collective_overhead")},
        {"ll_bandwidth_fraction", mean_of("ll_bandwidth_fraction")},
        {"simple_step_latency", mean_of("simple_step_latency")},
        {"nvlink_latency", mean_of("nvlink_latency")},
        {"local_copy_bandwidth",
         450e9 * 0.5 * (a100.at("local_copy_bandwidth") / 300e9 + b200.at("local_copy_bandwidth") / 900e9)},
        {"nvlink_bandwidth", 450e9 * 0.5 * (a100.at("nvlink_bandwidth") / 300e9 + b200.at("nvlink_bandwidth") / 900e9)}}}};
  bool all_agree = true;
  for (const auto& [preset, params] : targets) {
    const config::Params p = preset_defaults(preset);
    for (const auto& [k, v] : params) {
      const double d = p.number(k);
      const bool agree = std::fabs(d - v) <= std::max(0.01 * std::fabs(v), is_time(k) ? 1e-8 : 0.0);
      all_agree = all_agree && agree;
      const double shown = k == "ll_bandwidth_fraction" ? v : is_time(k) ? std::round(v * 1e9) / 1e9 : std::round(v / 1e8) * 1e8;
      md << "| " << preset << " | " << k << " | " << format_param(k, d) << " | " << format_param(k, shown) << " | "
         << (agree ? "yes" : "**no**") << " |\n";
    }
  }
  std::cout << md.str();
  if (!out.empty()) util::write_file_atomically(out, md.str());
  if (!rows_out.empty()) {
    std::ostringstream csv;
    csv << "setup,collective,num_workers,devices_per_node,groups,size_bytes,measured_us,predicted_us,heldout_us,mixed\n";
    for (const Row& r : rows)
      csv << r.setup << ',' << r.collective << ',' << r.n << ',' << r.per_node << ',' << r.groups << ','
          << static_cast<long long>(r.bytes) << ',' << r.measured * 1e6 << ',' << r.predicted * 1e6 << ','
          << r.predicted_heldout * 1e6 << ',' << (r.mixed ? 1 : 0) << '\n';
    util::write_file_atomically(rows_out, csv.str());
  }
  if (!all_agree) std::cerr << "warning: some topology preset defaults differ from the fit (see the last table)\n";
  return kExitOk;
}

}  // namespace ks::app
