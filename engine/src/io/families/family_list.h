#pragma once
// Every model family, once, in the order refusals list them (io/families/family.h says what a
// family's folder provides). Adding a family: its folder io/families/<id>/ (<id>.cpp, <id>_forward.cpp),
// one X(<id>) here, its test, its section in docs/VARIANTS.md ("The model's own attention") and
// docs/ARCHITECTURE.md's walk-through.

#define ATTNSCOPE_FAMILIES(X)                                                                            \
    X(bert) X(roberta) X(gpt2) X(transfo_xl) X(switch_transformers) X(llama) X(mistral) X(qwen2) X(qwen3) \
        X(mixtral) X(qwen2_moe) X(qwen3_moe) X(olmoe) X(gemma2) X(gemma3_text) X(phi3) X(gpt_oss) X(deepseek_v2) X(deepseek_v3) X(vit) X(star_transformer)
