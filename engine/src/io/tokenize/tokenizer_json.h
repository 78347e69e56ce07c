#pragma once
// tokenizer.json already parsed: the GGUF reader builds one from a file's metadata.

#include <attnscope/model_tokenizer.h>

#include <nlohmann/json.hpp>

namespace attnscope::engine {

/// makeTokenizerFromJson's work on a parsed document.
Result<std::shared_ptr<const ModelTokenizer>> makeTokenizerFromJsonValue(const nlohmann::json& root, const std::string& source);

}  // namespace attnscope::engine
