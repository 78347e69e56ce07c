// `llama`: the Llama decoder (Touvron et al. 2023) as Hugging Face's LlamaModel computes and names
// it; the shared decoder code is decoder.cpp, its forward llama_forward.cpp.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::llama {
namespace {

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    return readDecoderConfig(f, root, c, DecoderTraits{});
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "llama";
    e.name = "Llama";
    e.reference = "transformers' LlamaModel (modeling_llama.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOrSentencePiece;
    e.gguf.architecture = "llama";  // Llama and Mistral; with experts, Mixtral
    e.gguf.experts = GgufReading::Experts::Without;
    e.gguf.permutedQk = true;
    e.gguf.completeConfig = &completeLlamaGgufConfig;
    return e;
}

}  // namespace attnscope::engine::families::llama
