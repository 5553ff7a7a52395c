#include "base/config/document.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace ks::config {

namespace {

// Where each YAML document of a stream starts; every other parser event is ignored.
struct DocumentStarts : YAML::EventHandler {
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

const char* const kDefaultOrigin = "<default>";

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string trim(const std::string& s) {
  const char* space = " \t\r\n";
  std::size_t begin = s.find_first_not_of(space);
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

// True when `path` is `prefix` or lies under it.
bool under(const std::string& path, const std::string& prefix) {
  return path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '.');
}

// What a node is, for "expected X, got Y".
std::string describe(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a sequence";
  if (node.IsNull()) return "an empty value";
  return "'" + node.Scalar() + "'";
}

struct Entry {
  YAML::Node key;
  YAML::Node value;
};

// Looks a key up by iterating: yaml-cpp's operator[] on a non-const node would insert it.
std::optional<Entry> find_entry(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return std::nullopt;
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return Entry{it->first, it->second};
  return std::nullopt;
}

SourceMark to_mark(const std::string& origin, const YAML::Mark& mark) {
  if (mark.is_null()) return {origin};
  return {origin, mark.line + 1, mark.column + 1};  // yaml-cpp marks are 0-based
}

// yaml-cpp 0.7 keeps only one of two equal keys when looking up, silently; reject them (and
// non-scalar keys, which key paths cannot name). `fixed` replaces node marks for --set values.
void check_keys(const YAML::Node& node, const std::string& path, const std::string& origin,
                const SourceMark* fixed) {
  auto mark_of = [&](const YAML::Node& n) { return fixed ? *fixed : to_mark(origin, n.Mark()); };
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) check_keys(item, path, origin, fixed);
  } else if (node.IsMap()) {
    std::map<std::string, SourceMark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar())
        throw ConfigError(mark_of(it->first), path,
                          "mapping keys must be plain names, got " + describe(it->first));
      const std::string& key = it->first.Scalar();
      SourceMark mark = mark_of(it->first);
      auto [first, inserted] = seen.emplace(key, mark);
      if (!inserted)
        throw ConfigError(mark, join(path, key),
                          "duplicate key (first given at " + first->second.str() + ")");
      check_keys(it->second, join(path, key), origin, fixed);
    }
  }
}

// Forces block style so the resolved output looks the same whatever style the input used.
void set_block_style(YAML::Node node) {
  if (node.IsMap()) {
    node.SetStyle(YAML::EmitterStyle::Block);
    for (auto it = node.begin(); it != node.end(); ++it) set_block_style(it->second);
  } else if (node.IsSequence()) {
    node.SetStyle(YAML::EmitterStyle::Block);
    for (YAML::Node item : node) set_block_style(item);
  }
}

std::string expectation(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Int:
      return "an integer";
    case ParamType::Float:
      return "a number";
    case ParamType::Bool:
      return "true or false";
    case ParamType::String:
      return "a string";
    case ParamType::Enum:
      return "one of " + join_list(spec.choices);
    case ParamType::Quantity:
      return std::string(dim_noun(spec.dim)) + " such as '" + std::string(dim_example(spec.dim)) +
             "'";
  }
  return "a value";
}

std::string bound_text(const ParamSpec& spec, double bound) {
  return spec.type == ParamType::Quantity && bound != 0 ? format_quantity(bound, spec.dim)
                                                        : format_quantity(bound, Dim::None);
}

void check_bounds(const ParamSpec& spec, double value, const std::string& text,
                  const SourceMark& mark, const std::string& key) {
  if (spec.min && (spec.min_exclusive ? value <= *spec.min : value < *spec.min))
    throw ConfigError(mark, key,
                      std::string("must be ") + (spec.min_exclusive ? "> " : ">= ") +
                          bound_text(spec, *spec.min) + ", got '" + text + "'");
  if (spec.max && value > *spec.max)
    throw ConfigError(mark, key,
                      "must be <= " + bound_text(spec, *spec.max) + ", got '" + text + "'");
}

// Converts a scalar to the parameter's type and checks its bounds.
Value convert(const ParamSpec& spec, const YAML::Node& node, const SourceMark& mark,
              const std::string& key) {
  if (!node.IsScalar())
    throw ConfigError(mark, key, "expected " + expectation(spec) + ", got " + describe(node));
  const std::string& text = node.Scalar();
  auto fail = [&](const std::string& what) { throw ConfigError(mark, key, what); };
  switch (spec.type) {
    case ParamType::Int: {
      std::string_view digits = text;
      if (digits.size() > 1 && digits.front() == '+') digits.remove_prefix(1);
      std::int64_t value = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || end != digits.data() + digits.size())
        fail("expected an integer such as '8', got '" + text + "'");
      check_bounds(spec, static_cast<double>(value), text, mark, key);
      return value;
    }
    case ParamType::Float:
    case ParamType::Quantity: {
      std::string why;
      std::optional<double> value =
          parse_quantity(text, spec.type == ParamType::Float ? Dim::None : spec.dim, &why);
      if (!value) fail(why);
      check_bounds(spec, *value, text, mark, key);
      return *value;
    }
    case ParamType::Bool: {
      bool value = false;
      if (!YAML::convert<bool>::decode(node, value))
        fail("expected true or false, got '" + text + "'");
      return value;
    }
    case ParamType::String:
      return text;
    case ParamType::Enum: {
      if (std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end())
        return text;
      std::string hint = did_you_mean(text, spec.choices);
      fail("expected one of " + join_list(spec.choices) + ", got '" + text + "'" +
           (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
  return text;
}

}  // namespace

struct Document::Impl {
  YAML::Node root;
  std::string origin;
  // Values that did not come from the file (overrides, defaults), by key path; a value under a
  // listed path came from that entry too.
  std::map<std::string, SourceMark> synthetic;
  // Per mapping (by key path): the keys read or declared by a schema. A mapping that is listed
  // was visited as a Section.
  std::map<std::string, std::set<std::string>> known;

  std::optional<YAML::Node> find(const std::string& path) const {
    YAML::Node node = root;
    std::size_t begin = 0;
    while (begin < path.size()) {
      std::size_t end = std::min(path.find('.', begin), path.size());
      std::optional<Entry> entry = find_entry(node, path.substr(begin, end - begin));
      if (!entry) return std::nullopt;
      node.reset(entry->value);  // reset, not operator=: assignment would overwrite the node
      begin = end + 1;
    }
    return node;
  }

  // A section's node; it exists, since the Section was created from it.
  YAML::Node section_node(const std::string& path) const {
    std::optional<YAML::Node> node = find(path);
    if (!node) throw std::logic_error("section '" + path + "' is no longer in the document");
    return *node;
  }

  const SourceMark* synthetic_mark(std::string path) const {
    while (true) {
      auto it = synthetic.find(path);
      if (it != synthetic.end()) return &it->second;
      std::size_t dot = path.rfind('.');
      if (dot == std::string::npos) return nullptr;
      path.resize(dot);
    }
  }

  void set_synthetic(const std::string& path, const SourceMark& mark) {
    for (auto it = synthetic.begin(); it != synthetic.end();)
      it = under(it->first, path) ? synthetic.erase(it) : std::next(it);
    synthetic[path] = mark;
  }

  SourceMark mark_at(const std::string& path, const YAML::Node& node) const {
    if (const SourceMark* mark = synthetic_mark(path)) return *mark;
    return to_mark(origin, node.Mark());
  }

  // An empty value has no position of its own in yaml-cpp (it gets the next token's), so its
  // key's position is used.
  SourceMark value_mark(const std::string& path, const Entry& entry) const {
    return mark_at(path, entry.value.IsNull() ? entry.key : entry.value);
  }

  // A key of `map` that no section read and that looks like a misspelling of `wanted` (which is
  // missing): `workloda:` for `workload:`. Reported as that unknown key, at its line, instead of
  // only "missing required section 'workload'".
  void throw_if_misspelt(const YAML::Node& map, const std::string& path, const std::string& wanted,
                         const std::string& missing) const {
    auto visited = known.find(path);
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (key == wanted || (visited != known.end() && visited->second.count(key) != 0)) continue;
      if (did_you_mean(key, {wanted}) != wanted) continue;
      const std::string child = join(path, key);
      throw ConfigError(mark_at(child, it->first), child,
                        "unknown key (did you mean '" + wanted + "'? " + missing + ")");
    }
  }

  void check_unused(const YAML::Node& map, const std::string& path) const {
    auto visited = known.find(path);
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::string child = join(path, key);
      if (visited == known.end() || visited->second.count(key) == 0) {
        std::string what = "unknown key";
        if (visited != known.end() && !visited->second.empty()) {
          std::vector<std::string> candidates(visited->second.begin(), visited->second.end());
          std::string hint = did_you_mean(key, candidates);
          what += " (" + (hint.empty() ? "" : "did you mean '" + hint + "'? ") +
                  "known keys: " + join_list(candidates) + ")";
        }
        throw ConfigError(mark_at(child, it->first), child, what);
      }
      if (it->second.IsMap()) check_unused(it->second, child);
    }
  }
};

// ---- Section ----

Section::Section(Document* doc, std::string path) : doc_(doc), path_(std::move(path)) {
  doc_->impl_->known[path_];
}

const std::string& Section::path() const { return path_; }

bool Section::has(const std::string& key) const {
  doc_->impl_->known[path_].insert(key);
  return find_entry(doc_->impl_->section_node(path_), key).has_value();
}

SourceMark Section::mark() const {
  return doc_->impl_->mark_at(path_, doc_->impl_->section_node(path_));
}

SourceMark Section::mark(const std::string& key) const {
  Document::Impl& impl = *doc_->impl_;
  impl.known[path_].insert(key);
  std::optional<Entry> entry = find_entry(impl.section_node(path_), key);
  return entry ? impl.value_mark(join(path_, key), *entry) : mark();
}

Section Section::section(const std::string& key, bool required) const {
  Document::Impl& impl = *doc_->impl_;
  impl.known[path_].insert(key);
  const std::string child = join(path_, key);
  YAML::Node map = impl.section_node(path_);
  std::optional<Entry> entry = find_entry(map, key);
  if (!entry) {
    if (required) {
      impl.throw_if_misspelt(map, path_, key, "the required section '" + child + "' is missing");
      throw ConfigError(mark(), child, "missing required section");
    }
    map[key] = YAML::Node(YAML::NodeType::Map);
    impl.set_synthetic(child, mark());
  } else if (entry->value.IsNull()) {
    // `key:` with nothing under it reads as an empty section.
    map[key] = YAML::Node(YAML::NodeType::Map);
    impl.set_synthetic(child, impl.mark_at(child, entry->key));
  } else if (!entry->value.IsMap()) {
    throw ConfigError(impl.value_mark(child, *entry), child,
                      "expected a mapping, got " + describe(entry->value));
  }
  return Section(doc_, child);
}

std::string Section::kind(const std::optional<std::string>& default_kind) const {
  Document::Impl& impl = *doc_->impl_;
  impl.known[path_].insert("kind");
  const std::string key = join(path_, "kind");
  YAML::Node map = impl.section_node(path_);
  std::optional<Entry> entry = find_entry(map, "kind");
  if (!entry || entry->value.IsNull()) {
    if (!default_kind) {
      if (!entry) impl.throw_if_misspelt(map, path_, "kind", "the required key 'kind' is missing");
      throw ConfigError(mark(), path_, "missing required key 'kind'");
    }
    map["kind"] = *default_kind;
    impl.set_synthetic(key, {kDefaultOrigin});
    return *default_kind;
  }
  if (!entry->value.IsScalar())
    throw ConfigError(impl.value_mark(key, *entry), key,
                      "expected a kind name, got " + describe(entry->value));
  return entry->value.Scalar();
}

Params Section::resolve(const Schema& schema) const {
  Document::Impl& impl = *doc_->impl_;
  std::set<std::string>& known = impl.known[path_];
  known.insert("kind");
  YAML::Node map = impl.section_node(path_);
  Params params;
  params.set_path(path_);
  for (const ParamSpec& spec : schema.params()) {
    known.insert(spec.name);
    const std::string key = join(path_, spec.name);
    std::optional<Entry> entry = find_entry(map, spec.name);
    // An empty value (`key:`) of an optional parameter means "the default".
    if (entry && !(entry->value.IsNull() && !spec.required())) {
      SourceMark mark = impl.value_mark(key, *entry);
      params.set(spec.name, convert(spec, entry->value, mark, key), mark);
      continue;
    }
    if (!spec.required()) {
      const SourceMark mark{kDefaultOrigin};
      YAML::Node value(*spec.default_text);
      params.set(spec.name, convert(spec, value, mark, key), mark);
      map[spec.name] = value;
      impl.set_synthetic(key, mark);
      continue;
    }
    if (entry)
      throw ConfigError(impl.value_mark(key, *entry), key,
                        "expected " + expectation(spec) + ", got an empty value");
    impl.throw_if_misspelt(map, path_, spec.name, "the required key '" + spec.name + "' is missing");
    throw ConfigError(mark(), path_, "missing required key '" + spec.name + "'");
  }
  return params;
}

std::vector<std::string> Section::keys() const {
  std::vector<std::string> keys;
  const YAML::Node map = doc_->impl_->section_node(path_);
  for (auto it = map.begin(); it != map.end(); ++it) keys.push_back(it->first.Scalar());
  return keys;
}

// ---- Document ----

Document::Document() : impl_(std::make_unique<Impl>()) {}
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;
Document::~Document() = default;

Document Document::load_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError({path}, "", "cannot read file (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError({path}, "", std::string("cannot read file (") + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError({path}, "", "cannot read file (read error)");
  return parse(text.str(), path);
}

Document Document::parse(const std::string& text, const std::string& origin) {
  // Not YAML::LoadAll: yaml-cpp 0.7's loops forever, allocating, when a stray token (a line
  // starting with ',') makes every further document empty (fixed upstream by yaml-cpp PR #1319;
  // tests/fuzz/regressions/scenario). Count at most two documents, then load the first.
  DocumentStarts starts;
  YAML::Node root;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) {
    }
    if (starts.marks.size() < 2) root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(to_mark(origin, e.mark), "", e.msg);
  }
  if (starts.marks.size() > 1)
    throw ConfigError(to_mark(origin, starts.marks[1]), "",
                      "expected a single YAML document (a second one starts here: a '---', or a stray "
                      "character at the start of a line?)");
  if (starts.marks.empty() || !root.IsMap())
    throw ConfigError({origin}, "",
                      "expected a mapping at the top level, got " +
                          (starts.marks.empty() ? "an empty document" : describe(root)));
  check_keys(root, "", origin, nullptr);
  Document doc;
  doc.impl_->root = root;
  doc.impl_->origin = origin;
  return doc;
}

void Document::apply_override(const std::string& assignment) {
  const SourceMark mark{"--set " + assignment};
  std::size_t eq = assignment.find('=');
  if (eq == std::string::npos) throw ConfigError(mark, "", "expected key.path=value");
  const std::string key = trim(assignment.substr(0, eq));
  std::vector<std::string> segments;
  for (std::size_t begin = 0;;) {
    std::size_t end = std::min(key.find('.', begin), key.size());
    segments.push_back(key.substr(begin, end - begin));
    if (segments.back().empty())
      throw ConfigError(mark, "", "malformed key path '" + key + "' (expected key.path=value)");
    if (end == key.size()) break;
    begin = end + 1;
  }

  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError(mark, key, "cannot parse the value: " + e.msg);
  }
  check_keys(value, key, mark.origin, &mark);

  YAML::Node node = impl_->root;
  std::string path;
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
    path = join(path, segments[i]);
    std::optional<Entry> entry = find_entry(node, segments[i]);
    if (!entry || entry->value.IsNull()) {
      node[segments[i]] = YAML::Node(YAML::NodeType::Map);
      impl_->set_synthetic(path, mark);
    } else if (!entry->value.IsMap()) {
      throw ConfigError(
          mark, key,
          "cannot set it: '" + path + "' is " + describe(entry->value) + ", not a mapping");
    }
    node.reset(node[segments[i]]);
  }
  node[segments.back()] = value;
  impl_->set_synthetic(key, mark);
}

Section Document::root() { return Section(this, ""); }

const std::string& Document::origin() const { return impl_->origin; }

void Document::check_unused() const { impl_->check_unused(impl_->root, ""); }

std::string Document::resolved_yaml() const {
  YAML::Node copy = YAML::Clone(impl_->root);
  set_block_style(copy);
  YAML::Emitter out;
  out << copy;
  return std::string(out.c_str()) + "\n";
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  std::vector<std::size_t> row;
  for (const std::string& candidate : candidates) {
    // Levenshtein distance with one rolling row.
    row.resize(candidate.size() + 1);
    for (std::size_t j = 0; j <= candidate.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= candidate.size(); ++j) {
        std::size_t substitute = diagonal + (word[i - 1] == candidate[j - 1] ? 0 : 1);
        diagonal = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
      }
    }
    if (row[candidate.size()] < best_distance) {
      best_distance = row[candidate.size()];
      best = candidate;
    }
  }
  return best;
}

}  // namespace ks::config
