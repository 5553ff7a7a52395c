#include "base/config/schema.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ks::config {
namespace {

Schema example_schema() {
  return Schema("a test component")
      .integer("count", 8, "how many", 1, 64)
      .number("ratio", 0.9, "a fraction", 0.0, 1.0)
      .flag("enabled", true, "on or off")
      .string("label", std::nullopt, "a name")
      .choice("policy", {"fcfs", "priority"}, std::string("fcfs"), "queue order")
      .quantity("bandwidth", Dim::Bandwidth, std::string("3.35TB/s"), "HBM bandwidth");
}

TEST(config_schema, BuildersRecordTypesDefaultsAndBounds) {
  Schema schema = example_schema();
  EXPECT_EQ(schema.doc(), "a test component");
  ASSERT_EQ(schema.params().size(), 6u);

  const ParamSpec* count = schema.find("count");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->type, ParamType::Int);
  EXPECT_EQ(count->default_text, "8");
  EXPECT_EQ(count->min, 1.0);
  EXPECT_EQ(count->max, 64.0);
  EXPECT_FALSE(count->min_exclusive);

  const ParamSpec* ratio = schema.find("ratio");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ(ratio->type, ParamType::Float);
  EXPECT_EQ(ratio->default_text, "0.9");

  EXPECT_EQ(schema.find("enabled")->type, ParamType::Bool);
  EXPECT_EQ(schema.find("enabled")->default_text, "true");

  const ParamSpec* label = schema.find("label");
  EXPECT_EQ(label->type, ParamType::String);
  EXPECT_TRUE(label->required());
  EXPECT_FALSE(count->required());

  const ParamSpec* policy = schema.find("policy");
  EXPECT_EQ(policy->type, ParamType::Enum);
  EXPECT_EQ(policy->choices, (std::vector<std::string>{"fcfs", "priority"}));

  const ParamSpec* bandwidth = schema.find("bandwidth");
  EXPECT_EQ(bandwidth->type, ParamType::Quantity);
  EXPECT_EQ(bandwidth->dim, Dim::Bandwidth);
  EXPECT_EQ(bandwidth->default_text, "3.35TB/s");
  // Quantities are positive unless told otherwise.
  EXPECT_EQ(bandwidth->min, 0.0);
  EXPECT_TRUE(bandwidth->min_exclusive);

  EXPECT_EQ(schema.find("nope"), nullptr);
}

TEST(config_schema, ParamsKeepDeclarationOrder) {
  Schema schema = example_schema();
  std::vector<std::string> names;
  for (const ParamSpec& spec : schema.params()) names.push_back(spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"count", "ratio", "enabled", "label", "policy",
                                             "bandwidth"}));
}

TEST(config_schema, DeclarationMistakesAreLogicErrors) {
  EXPECT_THROW(Schema().integer("x", 1, "").integer("x", 2, ""), std::logic_error);
  EXPECT_THROW(Schema().choice("p", {"a", "b"}, std::string("c"), ""), std::logic_error);
  EXPECT_THROW(Schema().choice("p", {}, std::nullopt, ""), std::logic_error);
  EXPECT_THROW(Schema().quantity("t", Dim::Time, std::string("5"), ""), std::logic_error);
  EXPECT_THROW(Schema().quantity("t", Dim::Time, std::string("5GB"), ""), std::logic_error);
  EXPECT_THROW(Schema().number("", 1.0, ""), std::logic_error);
  EXPECT_NO_THROW(Schema().quantity("t", Dim::Time, std::string("5us"), ""));
}

TEST(config_schema, NumberDefaultTextRoundTrips) {
  Schema schema = Schema().number("a", 0.1, "").number("b", 1e-7, "").number("c", 2.0, "");
  EXPECT_EQ(std::stod(*schema.find("a")->default_text), 0.1);
  EXPECT_EQ(std::stod(*schema.find("b")->default_text), 1e-7);
  EXPECT_EQ(*schema.find("c")->default_text, "2");
}

TEST(config_params, GettersReturnStoredValues) {
  Params params;
  params.set_path("hardware.gpu");
  params.set("count", std::int64_t{8}, {"f.yaml", 3, 5});
  params.set("ratio", 0.5, {});
  params.set("enabled", false, {});
  params.set("policy", std::string("fcfs"), {"<default>"});

  EXPECT_EQ(params.path(), "hardware.gpu");
  EXPECT_EQ(params.integer("count"), 8);
  EXPECT_DOUBLE_EQ(params.number("count"), 8.0);  // an integer reads as a number too
  EXPECT_DOUBLE_EQ(params.number("ratio"), 0.5);
  EXPECT_FALSE(params.flag("enabled"));
  EXPECT_EQ(params.string("policy"), "fcfs");
  EXPECT_EQ(params.mark("count").line, 3);
  EXPECT_EQ(params.mark("count").column, 5);
  EXPECT_EQ(params.mark("policy").origin, "<default>");
  EXPECT_TRUE(params.has("ratio"));
  EXPECT_FALSE(params.has("missing"));
}

TEST(config_params, SetReplaces) {
  Params params;
  params.set("x", 1.0, {});
  params.set("x", 2.0, {"--set x=2"});
  EXPECT_DOUBLE_EQ(params.number("x"), 2.0);
  EXPECT_EQ(params.mark("x").origin, "--set x=2");
}

TEST(config_params, ProgrammingErrorsAreLogicErrors) {
  Params params;
  params.set("ratio", 0.5, {});
  params.set("name", std::string("x"), {});
  EXPECT_THROW(params.integer("ratio"), std::logic_error);
  EXPECT_THROW(params.flag("ratio"), std::logic_error);
  EXPECT_THROW(params.string("ratio"), std::logic_error);
  EXPECT_THROW(params.number("name"), std::logic_error);
  EXPECT_THROW(params.number("missing"), std::logic_error);
  EXPECT_THROW(params.mark("missing"), std::logic_error);
}

}  // namespace
}  // namespace ks::config
