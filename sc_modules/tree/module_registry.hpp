#pragma once
// Parameters and statistics registered on SystemC objects and found by hierarchical name, in the
// spirit of Sparta's Unit and VCML's component properties: "replica0.stage1.gpu0.busy_seconds" is
// statistic `busy_seconds` of the object named "replica0.stage1.gpu0". Any sc_object can carry
// them, so a plug-in module (a user's GPU) gets its statistics registered by whoever builds it,
// without subclassing anything of ours. Statistics are read when asked (a function per value), so
// registering costs nothing while the simulation runs.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

namespace ks::tree {

class ModuleRegistry {
 public:
  // A parameter of `owner` (a value fixed at elaboration, as text: "2", "a100_sxm_80gb").
  void add_parameter(const sc_core::sc_object& owner, const std::string& name, std::string value);
  // A statistic of `owner`, read through `read` whenever asked.
  void add_statistic(const sc_core::sc_object& owner, const std::string& name, std::function<double()> read);

  // "object.path.name": the value, or nothing when no such object carries it.
  std::optional<double> statistic(const std::string& path) const;
  std::optional<std::string> parameter(const std::string& path) const;
  // Every registered statistic's full path, sorted.
  std::vector<std::string> statistic_paths() const;
  // The sum of statistic `name` over the objects under `scope` ("" = all; "replica0" = the
  // objects named replica0.*), in path order.
  double sum(const std::string& scope, const std::string& name) const;

 private:
  struct Entry {
    std::map<std::string, std::string> parameters;
    std::map<std::string, std::function<double()>> statistics;
  };
  static std::pair<std::string, std::string> split(const std::string& path);
  std::map<std::string, Entry> objects_;  // by the owner's hierarchical name
};

}  // namespace ks::tree
