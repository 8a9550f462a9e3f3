// For tests: parses YAML texts and keeps their documents alive as long as
// itself, so the nodes it hands out stay valid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/graph_file/yaml_document.h"

namespace tfrun {

class YamlTexts {
 public:
  // The root of `text`, which must parse.
  YamlNode Parse(const std::string& text) {
    StatusOr<YamlDocument> doc = ParseYaml(text, "g.yaml");
    if (!doc.ok()) std::abort();
    docs_.push_back(std::make_unique<YamlDocument>(std::move(*doc)));
    return docs_.back()->root();
  }

 private:
  std::vector<std::unique_ptr<YamlDocument>> docs_;
};

}  // namespace tfrun
