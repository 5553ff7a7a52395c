// Workload kind `synthetic`: arrivals (poisson, gamma, constant or a closed loop), prompt and
// output lengths from distributions or sampled from a trace, system prompts shared by a
// fraction of requests, and multi-turn conversations whose turns extend each other's context.
#include <queue>

#include "base/config/error.hpp"
#include "base/util/rng.hpp"
#include "serving/distributions.hpp"
#include "serving/trace_reader.hpp"
#include "serving/workload.hpp"

namespace ks::serving {
namespace {

constexpr std::uint64_t kConversationGroups = 1ULL << 40;  // group ids apart from system prompts

LengthDistribution length_of(const config::Params& p, const std::string& what) {
  try {
    const std::string kind = p.string(what + "_dist");
    return LengthDistribution(kind == "trace" ? "fixed" : kind, static_cast<double>(p.integer(what + "_tokens")),
                              p.number(what + "_std"), p.integer(what + "_min"), p.integer(what + "_max"));
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(p.mark(what + "_dist"), p.path() + "." + what + "_dist", e.what());
  }
}

class SyntheticWorkload final : public Workload {
 public:
  explicit SyntheticWorkload(const WorkloadArgs& args)
      : rng_(util::Rng::for_component(args.seed, "workload.synthetic")),
        arrivals_(args.params.string("arrival") == "closed_loop" ? "constant" : args.params.string("arrival"),
                  args.params.number("rate"), args.params.number("cv")),
        closed_(args.params.string("arrival") == "closed_loop"),
        concurrency_(args.params.integer("concurrency")),
        remaining_(args.params.integer("num_requests")),
        duration_(args.params.number("duration")),
        prompt_(length_of(args.params, "prompt")),
        output_(length_of(args.params, "output")),
        prompt_from_trace_(args.params.string("prompt_dist") == "trace"),
        output_from_trace_(args.params.string("output_dist") == "trace"),
        prefix_fraction_(args.params.number("shared_prefix_fraction")),
        prefix_tokens_(args.params.integer("shared_prefix_tokens")),
        prefix_groups_(args.params.integer("prefix_groups")),
        turns_(args.params.integer("turns")),
        think_(args.params.number("think_time")) {
    const config::Params& p = args.params;
    if (remaining_ == 0 && duration_ <= 0)
      throw config::ConfigError(p.mark("num_requests"), p.path() + ".num_requests",
                                "num_requests 0 (unlimited) needs a duration");
    if (remaining_ == 0) remaining_ = -1;
    if (prompt_from_trace_ || output_from_trace_) {
      if (p.string("length_trace").empty())
        throw config::ConfigError(p.mark("length_trace"), p.path() + ".length_trace",
                                  "prompt_dist/output_dist 'trace' needs length_trace: a trace file to sample lengths from");
      const std::int64_t max_total = p.integer("length_trace_max_tokens");
      try {
        for (const TraceRow& row :
             read_trace(resolve_data_path(p.string("length_trace"), p.mark("length_trace").origin), TraceFormat::Auto))
          if (max_total == 0 || row.spec.prompt_tokens + row.spec.output_tokens <= max_total)
            lengths_.emplace_back(row.spec.prompt_tokens, row.spec.output_tokens);
      } catch (const std::exception& e) {
        throw config::ConfigError(p.mark("length_trace"), p.path() + ".length_trace", e.what());
      }
      if (lengths_.empty())
        throw config::ConfigError(p.mark("length_trace"), p.path() + ".length_trace",
                                  "no (prompt, output) pair within length_trace_max_tokens");
    }
  }

  std::int64_t max_concurrency() const override { return closed_ ? concurrency_ : 0; }
  double duration_s() const override { return closed_ ? duration_ : 0; }

  std::optional<RequestSpec> next() override {
    if (remaining_ == 0) return std::nullopt;
    if (!started_) {
      clock_ = closed_ ? 0 : arrivals_.next_gap(rng_);
      started_ = true;
    }
    RequestSpec spec;
    if (!pending_.empty() && (closed_ || pending_.top().arrival_s <= clock_)) {  // closed loop: turns go first
      spec = follow_up(pending_.top());
      pending_.pop();
    } else {
      spec = first_turn(clock_);
      if (!closed_) clock_ += arrivals_.next_gap(rng_);
    }
    if (!closed_ && duration_ > 0 && spec.arrival_s > duration_) return std::nullopt;
    if (remaining_ > 0) --remaining_;
    return spec;
  }

 private:
  struct Turn {  // the next turn of a conversation, pending until its arrival
    double arrival_s;
    std::uint64_t order;
    std::uint64_t group;
    std::int64_t context;  // tokens of the conversation so far
    std::int64_t turns_left;
    bool operator>(const Turn& o) const { return arrival_s != o.arrival_s ? arrival_s > o.arrival_s : order > o.order; }
  };

  std::pair<std::int64_t, std::int64_t> lengths() {
    std::pair<std::int64_t, std::int64_t> row{0, 0};
    if (!lengths_.empty()) row = lengths_[static_cast<std::size_t>(rng_.uniform_int(0, static_cast<std::int64_t>(lengths_.size()) - 1))];
    return {prompt_from_trace_ ? row.first : prompt_.sample(rng_), output_from_trace_ ? row.second : output_.sample(rng_)};
  }

  RequestSpec first_turn(double at) {
    RequestSpec spec;
    spec.arrival_s = at;
    const auto [prompt, output] = lengths();
    spec.prompt_tokens = prompt;
    spec.output_tokens = output;
    if (prefix_tokens_ > 0 && rng_.uniform() < prefix_fraction_) {  // a shared system prompt first
      spec.prompt_tokens += prefix_tokens_;
      spec.prefix_group = 1 + static_cast<std::uint64_t>(rng_.uniform_int(0, prefix_groups_ - 1));
      spec.group_tokens = prefix_tokens_;
    }
    if (turns_ > 1) {
      // The conversation's later turns re-send the whole context: every token of this turn is
      // the conversation's (its system prompt, if any, is then not shared with others).
      spec.prefix_group = kConversationGroups + conversations_++;
      spec.group_tokens = spec.prompt_tokens + spec.output_tokens;
      pending_.push({at + think_, order_++, spec.prefix_group, spec.group_tokens, turns_ - 1});
    }
    return spec;
  }

  RequestSpec follow_up(const Turn& t) {
    RequestSpec spec;
    spec.arrival_s = closed_ ? clock_ : t.arrival_s;
    const auto [message, output] = lengths();
    spec.prompt_tokens = t.context + message;
    spec.output_tokens = output;
    spec.prefix_group = t.group;
    spec.group_tokens = spec.prompt_tokens + spec.output_tokens;
    if (t.turns_left > 1) pending_.push({t.arrival_s + think_, order_++, t.group, spec.group_tokens, t.turns_left - 1});
    return spec;
  }

  util::Rng rng_;
  ArrivalProcess arrivals_;
  bool closed_;
  std::int64_t concurrency_;
  std::int64_t remaining_;  // -1: until duration
  double duration_;
  LengthDistribution prompt_, output_;
  bool prompt_from_trace_, output_from_trace_;
  std::vector<std::pair<std::int64_t, std::int64_t>> lengths_;
  double prefix_fraction_;
  std::int64_t prefix_tokens_, prefix_groups_, turns_;
  double think_;
  double clock_ = 0;
  bool started_ = false;
  std::uint64_t conversations_ = 0, order_ = 0;
  std::priority_queue<Turn, std::vector<Turn>, std::greater<Turn>> pending_;
};

const bool registered = [] {
  const std::vector<std::string> dists{"fixed", "uniform", "normal", "lognormal", "trace"};
  config::Schema schema(
      "Synthetic requests: arrival process, length distributions, shared system prompts and multi-turn "
      "conversations.");
  schema.choice("arrival", {"poisson", "gamma", "constant", "closed_loop"}, std::string("poisson"),
                "arrival process; closed_loop keeps `concurrency` requests in flight")
      .quantity("rate", config::Dim::Rate, std::string("1/s"), "mean arrival rate (open loop)")
      .number("cv", 1.0, "gamma: coefficient of variation of the gaps (>1 bursty, <1 smooth)", 0.01)
      .integer("concurrency", 1, "closed_loop: requests in flight", 1)
      .integer("num_requests", 1000, "requests to send (0: until duration)", 0)
      .quantity("duration", config::Dim::Time, std::string("0s"), "stop sending after this time (0s: no limit)", 0.0,
                false);
  for (const std::string what : {"prompt", "output"}) {
    schema.choice(what + "_dist", dists, std::string("fixed"), what + " length distribution (trace: sampled from length_trace)")
        .integer(what + "_tokens", what == "prompt" ? 512 : 128, what + " length (the mean for normal/lognormal)", 1)
        .number(what + "_std", 0.0, what + " length standard deviation (normal, lognormal)", 0.0)
        .integer(what + "_min", 1, "smallest " + what + " length", 1)
        .integer(what + "_max", 0, "largest " + what + " length (0: unbounded; required for uniform)", 0);
  }
  schema.string("length_trace", std::string(""), "trace file whose (prompt, output) pairs are sampled")
      .integer("length_trace_max_tokens", 0,
               "drop trace pairs whose prompt + output exceeds this (0: keep all), as Vidur's max_tokens", 0)
      .number("shared_prefix_fraction", 0.0, "fraction of conversations starting with a shared system prompt", 0.0, 1.0)
      .integer("shared_prefix_tokens", 0, "length of the shared system prompt (added to the prompt)", 0)
      .integer("prefix_groups", 1, "distinct system prompts, chosen uniformly", 1)
      .integer("turns", 1, "requests per conversation; each turn re-sends the context plus a new message", 1)
      .quantity("think_time", config::Dim::Time, std::string("5s"), "gap between a conversation's turns", 0.0, false);
  workload_registry().add("synthetic", {schema.doc(), schema, [](const WorkloadArgs& args) {
                                          return std::make_unique<SyntheticWorkload>(args);
                                        }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
