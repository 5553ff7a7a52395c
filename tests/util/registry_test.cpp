#include "base/registry/registry.hpp"

#include <gtest/gtest.h>

namespace {
struct Shape {
  virtual ~Shape() = default;
  virtual int sides() const = 0;
};
struct Square : Shape {
  int sides() const override { return 4; }
};
using ShapeRegistry = ks::registry::Registry<Shape>;

const bool registered = [] {
  ShapeRegistry::instance("test_shape")
      .add("square", {"A square.", ks::config::Schema("A square."), [] { return std::make_unique<Square>(); }});
  return true;
}();
}  // namespace

TEST(Registry, MakesRegisteredKinds) {
  ASSERT_TRUE(registered);
  auto& reg = ShapeRegistry::instance("test_shape");
  EXPECT_TRUE(reg.has("square"));
  EXPECT_EQ(reg.get("square", {}, "shape").make()->sides(), 4);
}

TEST(Registry, UnknownKindListsTheRegisteredOnes) {
  auto& reg = ShapeRegistry::instance("test_shape");
  ks::config::SourceMark mark{"s.yaml", 3, 5};
  try {
    reg.get("circle", mark, "shape");
    FAIL() << "expected ConfigError";
  } catch (const ks::config::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("circle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("square"), std::string::npos) << msg;
    EXPECT_NE(msg.find("s.yaml:3"), std::string::npos) << msg;
  }
}

TEST(Registry, DuplicateRegistrationIsAProgrammingError) {
  auto& reg = ShapeRegistry::instance("test_shape");
  EXPECT_THROW(reg.add("square", {"again", ks::config::Schema(), [] { return std::make_unique<Square>(); }}),
               std::logic_error);
}

TEST(Registry, FindKindAcrossCategories) {
  const auto info = ks::registry::find_kind("test_shape.square");
  EXPECT_EQ(info.category, "test_shape");
  EXPECT_EQ(info.kind, "square");
  EXPECT_EQ(ks::registry::find_kind("square").doc, "A square.");
  EXPECT_THROW(ks::registry::find_kind("triangle"), std::invalid_argument);
}
