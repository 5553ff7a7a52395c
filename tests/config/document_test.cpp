#include "base/config/document.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

namespace ks::config {
namespace {

// Runs `fn`, which must throw a ConfigError, and returns it.
ConfigError expect_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return ConfigError({}, "", "");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Schema workload_schema() {
  return Schema("workload")
      .integer("num_requests", std::nullopt, "requests to send", 1)
      .quantity("rate", Dim::Rate, std::string("8/s"), "arrival rate")
      .integer("seed", 42, "random seed")
      .choice("order", {"fcfs", "priority"}, std::string("fcfs"), "queue order")
      .flag("warmup", false, "discard the first requests")
      .string("name", std::string("default"), "label");
}

// A temporary file removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/ks_config_testXXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(config_error, MarkAndMessage) {
  EXPECT_EQ((SourceMark{"f.yaml", 12, 3}).str(), "f.yaml:12:3");
  EXPECT_EQ((SourceMark{"f.yaml", 12, 0}).str(), "f.yaml:12");
  EXPECT_EQ((SourceMark{"f.yaml", 0, 0}).str(), "f.yaml");
  EXPECT_EQ((SourceMark{"--set a.b=c"}).str(), "--set a.b=c");

  ConfigError with_key({"f.yaml", 7, 3}, "workload.rate", "must be > 0");
  EXPECT_STREQ(with_key.what(), "f.yaml:7:3: key 'workload.rate': must be > 0");
  EXPECT_EQ(with_key.key_path(), "workload.rate");
  EXPECT_EQ(with_key.detail(), "must be > 0");
  EXPECT_EQ(with_key.mark().line, 7);

  ConfigError without_key({"f.yaml"}, "", "cannot read file");
  EXPECT_STREQ(without_key.what(), "f.yaml: cannot read file");
}

TEST(config_did_you_mean, SuggestsTheClosestWithinDistance) {
  const std::vector<std::string> keys = {"kind", "num_requests", "rate", "seed"};
  EXPECT_EQ(did_you_mean("num_reqests", keys), "num_requests");
  EXPECT_EQ(did_you_mean("knid", keys), "kind");  // transposition: distance 2
  EXPECT_EQ(did_you_mean("rates", keys), "rate");
  EXPECT_EQ(did_you_mean("hardware", keys), "");
  EXPECT_EQ(did_you_mean("num_requests_total_xx", keys), "");  // 9 edits > 21/3
  EXPECT_EQ(did_you_mean("anything", {}), "");
}

TEST(config_document, LoadFileReadsAndMarksWithPath) {
  TempFile file("workload:\n  num_requests: 100\n");
  Document doc = Document::load_file(file.path);
  EXPECT_EQ(doc.origin(), file.path);
  Params params = doc.root().section("workload").resolve(workload_schema());
  EXPECT_EQ(params.integer("num_requests"), 100);
  EXPECT_EQ(params.mark("num_requests").origin, file.path);
  EXPECT_EQ(params.mark("num_requests").line, 2);
  EXPECT_EQ(params.mark("num_requests").column, 17);
}

TEST(config_document, MissingFileIsReported) {
  const std::string path = "/nonexistent/dir/scenario.yaml";
  ConfigError e = expect_error([&] { Document::load_file(path); });
  EXPECT_EQ(e.mark().origin, path);
  EXPECT_TRUE(contains(e.what(), path));
  EXPECT_TRUE(contains(e.what(), "cannot read file"));
  EXPECT_TRUE(
      contains(expect_error([] { Document::load_file("/tmp"); }).what(), "cannot read file"));
}

TEST(config_document, MalformedYamlReportsLineAndColumn) {
  ConfigError e = expect_error([] { Document::parse("a: 1\nb: @x\n", "bad.yaml"); });
  // '@' is reserved in YAML; it sits on line 2, column 4.
  EXPECT_EQ(e.mark().line, 2);
  EXPECT_EQ(e.mark().column, 4);
  EXPECT_EQ(std::string(e.what()).rfind("bad.yaml:2:4: ", 0), 0u) << e.what();

  // A map value indented under a scalar: the error is on line 3.
  e = expect_error([] { Document::parse("a: 1\nb: 2\n  c: 3\n", "bad.yaml"); });
  EXPECT_EQ(e.mark().line, 3);

  TempFile file("x: [1, 2\n");
  e = expect_error([&] { Document::load_file(file.path); });
  EXPECT_EQ(e.mark().origin, file.path);
  EXPECT_GT(e.mark().line, 0);
}

TEST(config_document, RootMustBeAMapping) {
  EXPECT_TRUE(contains(expect_error([] { Document::parse("- 1\n- 2\n", "s.yaml"); }).what(),
                       "expected a mapping"));
  EXPECT_TRUE(contains(expect_error([] { Document::parse("just text", "s.yaml"); }).what(),
                       "expected a mapping"));
  EXPECT_TRUE(contains(expect_error([] { Document::parse("", "s.yaml"); }).what(), "empty"));
  EXPECT_TRUE(contains(expect_error([] { Document::parse("a: 1\n---\nb: 2\n", "s.yaml"); }).what(),
                       "single YAML document"));
}

TEST(config_document, DuplicateKeysAreReportedAtTheDuplicate) {
  ConfigError e = expect_error([] { Document::parse("a: 1\nb: 2\na: 3\n", "d.yaml"); });
  EXPECT_EQ(e.mark().line, 3);
  EXPECT_EQ(e.key_path(), "a");
  EXPECT_TRUE(contains(e.detail(), "duplicate key"));
  EXPECT_TRUE(contains(e.detail(), "d.yaml:1:1"));  // where the first one was

  e = expect_error([] { Document::parse("top:\n  x: 1\n  y: 2\n  x: 3\n", "d.yaml"); });
  EXPECT_EQ(e.mark().line, 4);
  EXPECT_EQ(e.key_path(), "top.x");

  e = expect_error([] { Document::parse("list:\n  - {a: 1, a: 2}\n", "d.yaml"); });
  EXPECT_EQ(e.mark().line, 2);
}

TEST(config_resolve, ValuesDefaultsAndMarks) {
  Document doc = Document::parse(
      "workload:\n"
      "  num_requests: 100\n"
      "  rate: 480/min\n"
      "  order: priority\n"
      "  warmup: yes\n",
      "w.yaml");
  Section workload = doc.root().section("workload");
  EXPECT_EQ(workload.path(), "workload");
  EXPECT_EQ(workload.keys(), (std::vector<std::string>{"num_requests", "rate", "order", "warmup"}));
  Params params = workload.resolve(workload_schema());
  EXPECT_EQ(params.path(), "workload");
  EXPECT_EQ(params.integer("num_requests"), 100);
  EXPECT_DOUBLE_EQ(params.number("rate"), 8.0);
  EXPECT_EQ(params.string("order"), "priority");
  EXPECT_TRUE(params.flag("warmup"));
  EXPECT_EQ(params.integer("seed"), 42);
  EXPECT_EQ(params.string("name"), "default");
  EXPECT_EQ(params.mark("rate").line, 3);
  EXPECT_EQ(params.mark("seed").origin, "<default>");
  EXPECT_EQ(workload.mark().line, 2);
  EXPECT_EQ(workload.mark("order").line, 4);
  EXPECT_EQ(workload.mark("order").column, 10);
  // Defaults are written into the document after the given keys.
  EXPECT_EQ(workload.keys(),
            (std::vector<std::string>{"num_requests", "rate", "order", "warmup", "seed", "name"}));
  EXPECT_NO_THROW(doc.check_unused());
}

TEST(config_resolve, TypeErrors) {
  auto error_for = [](const std::string& yaml) {
    return expect_error([&] {
      Document doc = Document::parse("workload:\n  num_requests: 10\n" + yaml, "t.yaml");
      doc.root().section("workload").resolve(workload_schema());
    });
  };
  ConfigError e = error_for("  seed: 1.5\n");
  EXPECT_EQ(e.key_path(), "workload.seed");
  EXPECT_EQ(e.mark().line, 3);
  EXPECT_TRUE(contains(e.detail(), "expected an integer")) << e.what();

  EXPECT_TRUE(contains(error_for("  rate: 8\n").detail(), "a unit is required"));
  EXPECT_TRUE(contains(error_for("  rate: 8GB\n").detail(), "expected a rate such as '8/s'"));
  EXPECT_TRUE(contains(error_for("  rate: [1, 2]\n").detail(), "got a sequence"));
  EXPECT_TRUE(contains(error_for("  rate: {a: 1}\n").detail(), "got a mapping"));
  EXPECT_TRUE(contains(error_for("  warmup: maybe\n").detail(), "expected true or false"));
  EXPECT_TRUE(contains(error_for("  name: [a]\n").detail(), "expected a string"));

  e = error_for("  order: fcsf\n");
  EXPECT_TRUE(contains(e.detail(), "fcfs, priority")) << e.what();
  EXPECT_TRUE(contains(e.detail(), "did you mean 'fcfs'")) << e.what();
}

TEST(config_resolve, PlainStringsAndBooleans) {
  Document doc = Document::parse("s:\n  name: 123\n  warmup: off\n  num_requests: +7\n", "t.yaml");
  Params params = doc.root().section("s").resolve(workload_schema());
  EXPECT_EQ(params.string("name"), "123");
  EXPECT_FALSE(params.flag("warmup"));
  EXPECT_EQ(params.integer("num_requests"), 7);
}

TEST(config_resolve, Bounds) {
  Schema schema = Schema()
                      .quantity("bw", Dim::Bandwidth, std::string("1TB/s"), "")
                      .integer("n", 4, "", 1, 8)
                      .number("f", 0.5, "", 0.0, 1.0)
                      .quantity("delay", Dim::Time, std::string("1us"), "", 1e-6, false);
  auto error_for = [&](const std::string& yaml) {
    return expect_error([&] { Document::parse(yaml, "b.yaml").root().resolve(schema); });
  };
  EXPECT_EQ(error_for("bw: 0TB/s\n").detail(), "must be > 0, got '0TB/s'");
  EXPECT_EQ(error_for("bw: -1GB/s\n").detail(), "must be > 0, got '-1GB/s'");
  EXPECT_EQ(error_for("n: 0\n").detail(), "must be >= 1, got '0'");
  EXPECT_EQ(error_for("n: 9\n").detail(), "must be <= 8, got '9'");
  EXPECT_EQ(error_for("f: 1.5\n").detail(), "must be <= 1, got '1.5'");
  EXPECT_EQ(error_for("delay: 999ns\n").detail(), "must be >= 1us, got '999ns'");

  Params edge = Document::parse("n: 8\nf: 0\ndelay: 1000ns\n", "b.yaml").root().resolve(schema);
  EXPECT_EQ(edge.integer("n"), 8);
  EXPECT_DOUBLE_EQ(edge.number("f"), 0.0);
  EXPECT_DOUBLE_EQ(edge.number("delay"), 1e-6);
}

TEST(config_resolve, MissingRequiredKeyAtTheSection) {
  Document doc = Document::parse("other: 1\nworkload:\n  rate: 8/s\n", "m.yaml");
  ConfigError e = expect_error([&] { doc.root().section("workload").resolve(workload_schema()); });
  EXPECT_EQ(e.detail(), "missing required key 'num_requests'");
  EXPECT_EQ(e.key_path(), "workload");
  EXPECT_EQ(e.mark().line, 3);  // the mapping starts at its first key
  EXPECT_EQ(std::string(e.what()),
            "m.yaml:3:3: key 'workload': missing required key 'num_requests'");
}

TEST(config_resolve, EmptyValueIsWrongForRequiredAndDefaultForOptional) {
  Document doc = Document::parse("w:\n  num_requests:\n  seed:\n", "n.yaml");
  ConfigError e = expect_error([&] { doc.root().section("w").resolve(workload_schema()); });
  EXPECT_EQ(e.key_path(), "w.num_requests");
  EXPECT_EQ(e.mark().line, 2);
  EXPECT_TRUE(contains(e.detail(), "expected an integer")) << e.what();

  Document optional = Document::parse("w:\n  num_requests: 3\n  seed:\n", "n.yaml");
  EXPECT_EQ(optional.root().section("w").resolve(workload_schema()).integer("seed"), 42);
}

TEST(config_sections, RequiredOptionalAndWrongType) {
  Document doc = Document::parse("a:\n  x: 1\nb: 5\nc:\n", "s.yaml");
  Section root = doc.root();
  EXPECT_EQ(root.path(), "");
  EXPECT_EQ(root.section("a").path(), "a");

  ConfigError e = expect_error([&] { root.section("missing"); });
  EXPECT_EQ(e.key_path(), "missing");
  EXPECT_EQ(e.detail(), "missing required section");

  e = expect_error([&] { root.section("b"); });
  EXPECT_EQ(e.key_path(), "b");
  EXPECT_EQ(e.mark().line, 3);
  EXPECT_TRUE(contains(e.detail(), "expected a mapping"));

  // An absent optional section and an empty one read as empty mappings.
  Params opt = root.section("opt", false).resolve(Schema().integer("k", 3, ""));
  EXPECT_EQ(opt.integer("k"), 3);
  EXPECT_EQ(opt.path(), "opt");
  EXPECT_TRUE(root.section("c").keys().empty());

  YAML::Node resolved = YAML::Load(doc.resolved_yaml());
  EXPECT_EQ(resolved["opt"]["k"].as<int>(), 3);
  EXPECT_TRUE(resolved["c"].IsMap());
}

// `workloda:` for `workload:` is the misspelt key, at its line, with the suggestion: not only
// "missing required section 'workload'" at the top of the file.
TEST(config_sections, MisspeltRequiredSectionIsReportedAsTheUnknownKey) {
  Document doc = Document::parse("name: t\nmodel:\n  name: x\nworkloda:\n  kind: poisson\n", "s.yaml");
  Section root = doc.root();
  root.section("model");
  ConfigError e = expect_error([&] { root.section("workload"); });
  EXPECT_EQ(std::string(e.what()),
            "s.yaml:4:1: key 'workloda': unknown key (did you mean 'workload'? the required section 'workload' is "
            "missing)");
  // Same for a required key of a section and for `kind`.
  Document keys = Document::parse("workload:\n  rate: 8/s\n  num_reqests: 5\n  knd: poisson\n", "k.yaml");
  e = expect_error([&] { keys.root().section("workload").resolve(workload_schema()); });
  EXPECT_EQ(std::string(e.what()),
            "k.yaml:3:3: key 'workload.num_reqests': unknown key (did you mean 'num_requests'? the required key "
            "'num_requests' is missing)");
  e = expect_error([&] { keys.root().section("workload").kind(); });
  EXPECT_EQ(e.key_path(), "workload.knd");
  EXPECT_EQ(e.mark().line, 4);
  // Nothing close: the plain message.
  Document far = Document::parse("name: t\nengine: {}\n", "f.yaml");
  e = expect_error([&] { far.root().section("workload"); });
  EXPECT_EQ(e.detail(), "missing required section");
}

TEST(config_sections, Kind) {
  Document doc =
      Document::parse("gpu:\n  kind: h100\n  hbm: 80GiB\nhost: {}\nbad:\n  kind: [x]\n", "k.yaml");
  Section root = doc.root();
  EXPECT_EQ(root.section("gpu").kind(), "h100");
  EXPECT_EQ(root.section("host").kind(std::string("simple")), "simple");
  EXPECT_EQ(YAML::Load(doc.resolved_yaml())["host"]["kind"].as<std::string>(), "simple");

  Document nokind = Document::parse("gpu:\n  hbm: 80GiB\n", "k.yaml");
  ConfigError e = expect_error([&] { nokind.root().section("gpu").kind(); });
  EXPECT_EQ(e.detail(), "missing required key 'kind'");
  EXPECT_EQ(e.key_path(), "gpu");

  e = expect_error([&] { root.section("bad").kind(); });
  EXPECT_EQ(e.key_path(), "bad.kind");
  EXPECT_EQ(e.mark().line, 6);
}

TEST(config_unused, MisspeltKeyReportedWithLineAndSuggestion) {
  Document doc = Document::parse(
      "workload:\n"
      "  kind: poisson\n"
      "  num_requests: 10\n"
      "  num_reqests: 100\n",
      "quick.yaml");
  Section workload = doc.root().section("workload");
  EXPECT_EQ(workload.kind(), "poisson");
  workload.resolve(workload_schema());
  ConfigError e = expect_error([&] { doc.check_unused(); });
  EXPECT_EQ(e.key_path(), "workload.num_reqests");
  EXPECT_EQ(e.mark().origin, "quick.yaml");
  EXPECT_EQ(e.mark().line, 4);
  EXPECT_EQ(e.mark().column, 3);
  EXPECT_TRUE(contains(e.detail(), "unknown key")) << e.what();
  EXPECT_TRUE(contains(e.detail(), "did you mean 'num_requests'?")) << e.what();
  // Known keys: all of the schema's (present or not) and kind.
  EXPECT_TRUE(
      contains(e.detail(), "known keys: kind, name, num_requests, order, rate, seed, warmup"))
      << e.what();
  EXPECT_EQ(
      std::string(e.what()).rfind("quick.yaml:4:3: key 'workload.num_reqests': unknown key", 0),
      0u);
}

TEST(config_unused, FirstUnknownKeyInDocumentOrder) {
  Document doc = Document::parse("b:\n  x: 1\n  zzz: 2\na: 1\nc: 2\n", "o.yaml");
  Section root = doc.root();
  root.section("b").has("x");
  root.has("a");
  ConfigError e = expect_error([&] { doc.check_unused(); });
  EXPECT_EQ(e.key_path(), "b.zzz");  // depth first: before the top-level 'c'
  EXPECT_EQ(e.mark().line, 3);
}

TEST(config_unused, UnreadSectionReportedAtItsKey) {
  Document doc = Document::parse("used: 1\nfoo:\n  bar: 1\n", "u.yaml");
  doc.root().mark("used");
  ConfigError e = expect_error([&] { doc.check_unused(); });
  EXPECT_EQ(e.key_path(), "foo");
  EXPECT_EQ(e.mark().line, 2);

  // Asked about but never read as a section: its keys are unknown.
  Document asked = Document::parse("foo:\n  bar: 1\n", "u.yaml");
  EXPECT_TRUE(asked.root().has("foo"));
  e = expect_error([&] { asked.check_unused(); });
  EXPECT_EQ(e.key_path(), "foo.bar");

  // Nothing read at all.
  Document unread = Document::parse("foo: 1\n", "u.yaml");
  EXPECT_EQ(expect_error([&] { unread.check_unused(); }).key_path(), "foo");
}

TEST(config_unused, HasAndSequencesCount) {
  Document doc = Document::parse("list:\n  - {a: 1}\n  - b: 2\nmaybe: 1\n", "h.yaml");
  Section root = doc.root();
  EXPECT_TRUE(root.has("list"));
  EXPECT_TRUE(root.has("maybe"));
  EXPECT_FALSE(root.has("absent"));
  EXPECT_NO_THROW(doc.check_unused());
}

TEST(config_unused, SuggestionFromKeysAskedAbout) {
  Document doc = Document::parse("worklaod:\n  x: 1\n", "s.yaml");
  EXPECT_FALSE(doc.root().has("workload"));
  ConfigError e = expect_error([&] { doc.check_unused(); });
  EXPECT_EQ(e.key_path(), "worklaod");
  EXPECT_TRUE(contains(e.detail(), "did you mean 'workload'?")) << e.what();
}

TEST(config_overrides, ReplaceAValueThenResolve) {
  Document doc = Document::parse("workload:\n  num_requests: 10\n  rate: 8/s\n", "o.yaml");
  doc.apply_override("workload.rate=16/s");
  doc.apply_override("workload.num_requests=200");
  Params params = doc.root().section("workload").resolve(workload_schema());
  EXPECT_DOUBLE_EQ(params.number("rate"), 16.0);
  EXPECT_EQ(params.integer("num_requests"), 200);
  EXPECT_EQ(params.mark("rate").origin, "--set workload.rate=16/s");
  EXPECT_EQ(params.mark("rate").line, 0);
  EXPECT_EQ(params.mark("num_requests").origin, "--set workload.num_requests=200");
  EXPECT_NO_THROW(doc.check_unused());
  YAML::Node resolved = YAML::Load(doc.resolved_yaml());
  EXPECT_EQ(resolved["workload"]["rate"].as<std::string>(), "16/s");
}

TEST(config_overrides, CreateNestedKeys) {
  Document doc = Document::parse("a: 1\n", "o.yaml");
  doc.apply_override("new.sub.x=5");
  doc.apply_override("new.sub.y=2.5");
  Section sub = doc.root().section("new").section("sub");
  Params params = sub.resolve(Schema().integer("x", std::nullopt, "").number("y", 0.0, ""));
  EXPECT_EQ(params.integer("x"), 5);
  EXPECT_DOUBLE_EQ(params.number("y"), 2.5);
  EXPECT_EQ(sub.mark().origin, "--set new.sub.x=5");
  EXPECT_EQ(sub.keys(), (std::vector<std::string>{"x", "y"}));
}

TEST(config_overrides, FlowValues) {
  Document doc = Document::parse("hardware:\n  gpu:\n    kind: a100\n", "o.yaml");
  doc.apply_override("hardware.gpu={kind: h100, hbm: 80GiB}");
  doc.apply_override("list=[1, 2]");
  Section gpu = doc.root().section("hardware").section("gpu");
  EXPECT_EQ(gpu.kind(), "h100");
  Params params = gpu.resolve(Schema().quantity("hbm", Dim::Bytes, std::nullopt, ""));
  EXPECT_DOUBLE_EQ(params.number("hbm"), 80.0 * 1073741824.0);
  EXPECT_EQ(params.mark("hbm").origin, "--set hardware.gpu={kind: h100, hbm: 80GiB}");

  ConfigError e = expect_error([&] { doc.root().resolve(Schema().number("list", 1.0, "")); });
  EXPECT_TRUE(contains(e.detail(), "got a sequence"));
  EXPECT_EQ(e.mark().origin, "--set list=[1, 2]");
}

TEST(config_overrides, TypeErrorNamesTheOverride) {
  Document doc = Document::parse("workload:\n  num_requests: 10\n", "o.yaml");
  doc.apply_override("workload.num_requests=abc");
  ConfigError e = expect_error([&] { doc.root().section("workload").resolve(workload_schema()); });
  EXPECT_EQ(
      std::string(e.what()).rfind(
          "--set workload.num_requests=abc: key 'workload.num_requests': expected an integer", 0),
      0u)
      << e.what();
}

TEST(config_overrides, UnknownOverriddenKeyNamesTheOverride) {
  Document doc = Document::parse("workload:\n  num_requests: 10\n", "o.yaml");
  doc.apply_override("workload.num_reqests=5");
  doc.root().section("workload").resolve(workload_schema());
  ConfigError e = expect_error([&] { doc.check_unused(); });
  EXPECT_EQ(e.key_path(), "workload.num_reqests");
  EXPECT_EQ(e.mark().origin, "--set workload.num_reqests=5");
  EXPECT_TRUE(contains(e.detail(), "did you mean 'num_requests'?"));
}

TEST(config_overrides, ReplacingAMappingForgetsOlderOverridesUnderIt) {
  Document doc = Document::parse("a:\n  b: 1\n", "o.yaml");
  doc.apply_override("a.b=2");
  doc.apply_override("a={b: 3}");
  Params params = doc.root().section("a").resolve(Schema().integer("b", std::nullopt, ""));
  EXPECT_EQ(params.integer("b"), 3);
  EXPECT_EQ(params.mark("b").origin, "--set a={b: 3}");
}

TEST(config_overrides, MalformedAssignments) {
  Document doc = Document::parse("a: 1\nm:\n  x: 1\n", "o.yaml");
  for (const std::string text : {"noequals", "=5", "a..b=1", ".a=1", "a.=1", " =1"}) {
    ConfigError e = expect_error([&] { doc.apply_override(text); });
    EXPECT_EQ(e.mark().origin, "--set " + text);
    EXPECT_EQ(std::string(e.what()).rfind("--set " + text + ": ", 0), 0u) << e.what();
  }
  ConfigError e = expect_error([&] { doc.apply_override("a.b=1"); });  // 'a' is a scalar
  EXPECT_TRUE(contains(e.detail(), "not a mapping")) << e.what();
  EXPECT_TRUE(
      contains(expect_error([&] { doc.apply_override("m.x=[1, 2"); }).what(), "--set m.x=[1, 2"));
  EXPECT_TRUE(contains(expect_error([&] { doc.apply_override("m={k: 1, k: 2}"); }).detail(),
                       "duplicate key"));
}

TEST(config_overrides, ValueKeepsEqualsSigns) {
  Document doc = Document::parse("a: 1\n", "o.yaml");
  doc.apply_override("name=x=y");
  EXPECT_EQ(doc.root().resolve(Schema().string("name", std::nullopt, "")).string("name"), "x=y");
}

TEST(config_resolved_yaml, ContainsDefaultsAndOverridesInBlockStyle) {
  const std::string text =
      "workload: {num_requests: 10, tags: [a, b]}\n"
      "hardware:\n"
      "  gpu:\n"
      "    kind: h100\n";
  auto build = [&] {
    Document doc = Document::parse(text, "r.yaml");
    doc.apply_override("hardware.gpu.count=8");
    Section root = doc.root();
    root.section("workload").resolve(workload_schema());
    root.section("workload").has("tags");
    root.section("hardware").section("gpu").kind();
    root.section("hardware").section("gpu").resolve(Schema().integer("count", 1, ""));
    doc.check_unused();
    return doc.resolved_yaml();
  };
  const std::string out = build();
  EXPECT_EQ(out, build());  // deterministic
  EXPECT_EQ(out.find('{'), std::string::npos) << out;
  EXPECT_EQ(out.find('['), std::string::npos) << out;

  YAML::Node resolved = YAML::Load(out);
  EXPECT_EQ(resolved["workload"]["num_requests"].as<int>(), 10);
  EXPECT_EQ(resolved["workload"]["rate"].as<std::string>(), "8/s");
  EXPECT_EQ(resolved["workload"]["seed"].as<int>(), 42);
  EXPECT_EQ(resolved["workload"]["order"].as<std::string>(), "fcfs");
  EXPECT_FALSE(resolved["workload"]["warmup"].as<bool>());
  EXPECT_EQ(resolved["workload"]["tags"].size(), 2u);
  EXPECT_EQ(resolved["hardware"]["gpu"]["count"].as<int>(), 8);
  EXPECT_EQ(resolved["hardware"]["gpu"]["kind"].as<std::string>(), "h100");

  // The resolved output is itself a valid scenario with the same values.
  Document again = Document::parse(out, "resolved.yaml");
  EXPECT_EQ(again.root().section("workload").resolve(workload_schema()).integer("seed"), 42);
}

}  // namespace
}  // namespace ks::config
