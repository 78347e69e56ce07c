#pragma once
// What every tokenizer target does with a tokenizer that loaded: encode texts that exercise
// pre-tokenizers and normalisers (spaces, punctuation, accents, CJK, invalid UTF-8), decode back.
#include <attnscope/model_tokenizer.h>

#include <memory>
#include <string>

inline void exerciseTokenizer(const std::shared_ptr<const attnscope::engine::ModelTokenizer>& tokenizer) {
    static const std::string kTexts[] = {"Hello, world!  It's 2026.", "naïve café — ünïcödé 東京 123", "\xff\xfe bad \xc3",
                                         "", " [CLS] <s> </s> <|endoftext|> ##ing"};
    for (const auto& text : kTexts) {
        auto encoded = tokenizer->encode(text, true);
        if (!encoded) continue;
        std::vector<std::int64_t> ids;
        for (const auto& t : encoded->tokens) ids.push_back(t.id);
        (void)tokenizer->decode(ids);
        for (std::int64_t id : ids) (void)tokenizer->tokenString(id);
    }
}
