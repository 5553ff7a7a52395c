// Workload kind `poisson`: Poisson arrivals at a fixed rate, fixed prompt and output lengths.
#include "base/util/rng.hpp"
#include "serving/workload.hpp"

namespace ks::serving {
namespace {

class PoissonWorkload final : public Workload {
 public:
  explicit PoissonWorkload(const WorkloadArgs& args)
      : rng_(util::Rng::for_component(args.seed, "workload.poisson")),
        rate_(args.params.number("rate")),
        remaining_(args.params.integer("num_requests")),
        prompt_(args.params.integer("prompt_tokens")),
        output_(args.params.integer("output_tokens")) {}

  std::optional<RequestSpec> next() override {
    if (remaining_ <= 0) return std::nullopt;
    --remaining_;
    clock_ += rng_.exponential(rate_);
    RequestSpec spec;
    spec.arrival_s = clock_;
    spec.prompt_tokens = prompt_;
    spec.output_tokens = output_;
    return spec;
  }

 private:
  util::Rng rng_;
  double rate_;
  std::int64_t remaining_;
  std::int64_t prompt_;
  std::int64_t output_;
  double clock_ = 0;
};

const bool registered = [] {
  config::Schema schema("Poisson arrivals at a fixed rate with fixed prompt and output lengths.");
  schema.quantity("rate", config::Dim::Rate, std::nullopt, "mean arrival rate, e.g. '8/s'")
      .integer("num_requests", 1000, "requests to send", 1)
      .integer("prompt_tokens", 512, "prompt length of every request", 1)
      .integer("output_tokens", 128, "tokens generated for every request", 1);
  workload_registry().add("poisson", {schema.doc(), schema, [](const WorkloadArgs& args) {
                                        return std::make_unique<PoissonWorkload>(args);
                                      }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
