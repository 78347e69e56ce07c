#include "io/tokenize/tokenizer_common.h"

#include <attnscope/tokenize.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

namespace attnscope::engine {

std::vector<TemplateItem> templateWithSpecials(const std::string& before, const std::string& after) {
    std::vector<TemplateItem> items;
    if (!before.empty()) items.push_back(TemplateItem{false, before, -1, 0});
    items.push_back(TemplateItem{true, {}, -1, 0});
    if (!after.empty()) items.push_back(TemplateItem{false, after, -1, 0});
    return items;
}

std::vector<TextSegment> splitOnSpecialTokens(const std::string& text, const std::vector<std::string>& specials,
                                              const Vocab& vocab) {
    struct Candidate {
        const std::string* token;
        std::int64_t id;
        std::size_t next;  ///< next occurrence at or after the scan position
    };
    std::vector<Candidate> candidates;
    for (const std::string& s : specials) {
        const std::int64_t id = vocab.find(s);
        if (s.empty() || id < 0) continue;
        candidates.push_back(Candidate{&s, id, text.find(s)});
    }
    // Leftmost first, longest on a tie: what transformers' trie split and tokenizers' added-token
    // matcher both do, so "[MASK]" wins over a hypothetical "[MA" starting at the same byte.
    std::vector<TextSegment> out;
    const auto size = static_cast<std::int64_t>(text.size());
    std::size_t pos = 0;
    while (true) {
        const Candidate* best = nullptr;
        for (Candidate& c : candidates) {
            if (c.next != std::string::npos && c.next < pos) c.next = text.find(*c.token, pos);
            if (c.next == std::string::npos) continue;
            if (best == nullptr || c.next < best->next ||
                (c.next == best->next && c.token->size() > best->token->size()))
                best = &c;
        }
        if (best == nullptr) break;
        if (best->next > pos)
            out.push_back(TextSegment{static_cast<std::int64_t>(pos), static_cast<std::int64_t>(best->next), -1});
        const std::size_t end = best->next + best->token->size();
        out.push_back(TextSegment{static_cast<std::int64_t>(best->next), static_cast<std::int64_t>(end), best->id});
        pos = end;
    }
    if (static_cast<std::int64_t>(pos) < size) out.push_back(TextSegment{static_cast<std::int64_t>(pos), size, -1});
    return out;
}

Result<std::vector<TemplateItem>> resolveTemplate(std::vector<TemplateItem> items, const Vocab& vocab,
                                                  const std::string& source) {
    int sequences = 0;
    for (TemplateItem& item : items) {
        if (item.sequence) {
            ++sequences;
            continue;
        }
        if (item.id < 0) item.id = vocab.find(item.token);
        if (item.id < 0)
            return makeError(ErrorCode::InvalidInput, source + ": the special token " + quoteForMessage(item.token) +
                                                          " the template needs is not in the vocabulary");
        if (item.id >= static_cast<std::int64_t>(vocab.tokens.size()))
            return makeError(ErrorCode::InvalidInput, source + ": the template's id " + std::to_string(item.id) +
                                                          " is outside the vocabulary (" +
                                                          std::to_string(vocab.tokens.size()) + " ids)");
        if (item.token.empty()) item.token = vocab.at(item.id);
    }
    if (!items.empty() && sequences != 1)
        return makeError(ErrorCode::InvalidInput,
                         source + ": the template must contain the text (sequence A) exactly once, not " +
                             std::to_string(sequences) + " times");
    return items;
}

void pushToken(EncodedText& out, std::int64_t id, std::string text, std::int64_t begin, std::int64_t end,
               bool special, std::int64_t typeId) {
    out.tokens.push_back(Token{std::move(text), begin, end, id});
    out.typeIds.push_back(typeId);
    out.special.push_back(special);
}

EncodedText applyTemplate(const std::vector<TemplateItem>& items, EncodedText body, std::int64_t textSize) {
    if (items.empty()) return body;
    EncodedText out;
    out.notices = std::move(body.notices);
    bool after = false;
    for (const TemplateItem& item : items) {
        if (item.sequence) {
            for (std::size_t i = 0; i < body.tokens.size(); ++i) {
                out.tokens.push_back(std::move(body.tokens[i]));
                out.typeIds.push_back(item.typeId);
                out.special.push_back(body.special[i]);
            }
            after = true;
            continue;
        }
        const std::int64_t at = after ? textSize : 0;
        pushToken(out, item.id, item.token, at, at, true, item.typeId);
    }
    return out;
}

Error cancelledTokenizing(std::int64_t done, std::int64_t total) {
    return makeError(ErrorCode::Cancelled,
                     "tokenizing cancelled at byte " + std::to_string(done) + " of " + std::to_string(total));
}

std::vector<TextSegment> textSegments(const std::string& text, bool recognize, const std::vector<std::string>& specials,
                                      const Vocab& vocab) {
    if (recognize) return splitOnSpecialTokens(text, specials, vocab);
    if (text.empty()) return {};
    return {TextSegment{0, static_cast<std::int64_t>(text.size()), -1}};
}

Result<EncodedText> VocabTokenizer::encode(const std::string& text, bool addSpecialTokens,
                                           const ProgressFn& progress) const {
    if (auto error = checkTextSize(text)) return *error;
    try {
        return encodeChecked(text, addSpecialTokens, progress);
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfBudget, "out of memory while tokenizing " + std::to_string(text.size()) + " bytes");
    }
}

std::optional<Error> checkTextSize(const std::string& text) {
    if (text.size() <= kMaxModelTokenizerTextBytes) return std::nullopt;
    return makeError(ErrorCode::InvalidArgument, "text is " + std::to_string(text.size()) +
                                                     " bytes; the model tokenizers accept at most " +
                                                     std::to_string(kMaxModelTokenizerTextBytes) + " bytes (8 MiB)");
}

// The common ways a download goes wrong (FORMATS.md §1.1) get their own message, because "not valid
// JSON" or "line 1: expected two tokens" would not tell the user what happened.
std::optional<Error> sniffTokenizerFile(std::string& text, const std::string& source, bool emptyOk) {
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    if (text.empty() && emptyOk) return std::nullopt;
    if (text.empty()) return makeError(ErrorCode::InvalidInput, source + ": the file is empty");
    if (text.compare(0, 24, "version https://git-lfs.") == 0)
        return makeError(ErrorCode::InvalidInput,
                         source + ": this is a Git LFS pointer, not the file itself (run `git lfs pull`)");
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '<') {
        std::string head = text.substr(first, 15);
        std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (head.rfind("<!doctype html", 0) == 0 || head.rfind("<html", 0) == 0)
            return makeError(ErrorCode::InvalidInput,
                             source + ": this is an HTML page (a failed download?), not a tokenizer file");
    }
    const auto nul = text.find('\0');
    if (nul != std::string::npos)
        return makeError(ErrorCode::InvalidInput,
                         source + ": NUL byte at offset " + std::to_string(nul) + " (tokenizer files are text)");
    const std::int64_t bad = findInvalidUtf8(text);
    if (bad >= 0)
        return makeError(ErrorCode::InvalidInput,
                         source + ": invalid UTF-8 at byte " + std::to_string(bad) + " (tokenizer files are UTF-8)");
    return std::nullopt;
}

std::optional<Error> checkVocabString(const std::string& token, const std::string& where) {
    if (token.find('\0') != std::string::npos)
        return makeError(ErrorCode::InvalidInput, where + ": token contains a NUL character");
    if (findInvalidUtf8(token) >= 0)
        return makeError(ErrorCode::InvalidInput, where + ": token is not valid UTF-8");
    return std::nullopt;
}

std::string quoteForMessage(const std::string& text) {
    std::size_t shown = std::min<std::size_t>(text.size(), 40);
    while (shown < text.size() && shown > 0 && (static_cast<unsigned char>(text[shown]) & 0xC0) == 0x80) --shown;
    std::string out = "'";
    for (std::size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (shown < text.size()) out += "...";
    return out + "'";
}

}  // namespace attnscope::engine
