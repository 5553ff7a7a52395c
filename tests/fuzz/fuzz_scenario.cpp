// Fuzz target: the scenario loader (YAML document with marks, schemas of every parameter type,
// units, overrides, unknown-key check, resolved output). Bad input must end in ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/config/document.hpp"
#include "base/config/units.hpp"

namespace {

ks::config::Schema fuzz_schema() {
  ks::config::Schema s("every parameter type");
  s.integer("n", 1, "an integer", 0, 1000)
      .number("x", 0.5, "a number", 0.0, 1.0)
      .flag("b", false, "a flag")
      .string("name", std::string("x"), "a string")
      .choice("kind", {"a", "b"}, std::string("a"), "a choice")
      .quantity("rate", ks::config::Dim::Rate, std::string("8/s"), "a rate")
      .quantity("t", ks::config::Dim::Time, std::string("5us"), "a time", 0.0, false)
      .quantity("bw", ks::config::Dim::Bandwidth, std::string("1TB/s"), "a bandwidth")
      .quantity("mem", ks::config::Dim::Bytes, std::string("80GiB"), "a size");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (ks::config::Dim dim : {ks::config::Dim::None, ks::config::Dim::Time, ks::config::Dim::Bytes,
                              ks::config::Dim::Bandwidth, ks::config::Dim::FlopRate, ks::config::Dim::Rate}) {
    std::string why;
    if (const auto v = ks::config::parse_quantity(text, dim, &why)) (void)ks::config::format_quantity(*v, dim);
  }
  try {
    ks::config::Document doc = ks::config::Document::parse(text, "fuzz.yaml");
    ks::config::Section root = doc.root();
    (void)root.resolve(fuzz_schema());
    for (const std::string& key : root.keys()) {
      if (key == "sec") (void)root.section(key).resolve(fuzz_schema());
    }
    doc.apply_override("sec.n=3");
    (void)doc.resolved_yaml();
    doc.check_unused();
  } catch (const ks::config::ConfigError&) {
  }
  return 0;
}
