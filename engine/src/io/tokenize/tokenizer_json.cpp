// tokenizer.json (HF tokenizers) for the shapes we support: BERT (WordPiece + BertNormalizer +
// BertPreTokenizer), GPT-2/RoBERTa (BPE + ByteLevel) and Llama 3 / Qwen2 / Qwen3 / SmolLM (BPE +
// a Split regex then ByteLevel, an optional NFC normalizer) and Llama 2 / Mistral / TinyLlama (BPE
// over "▁"-joined text with byte fallback: a Prepend + Replace normalizer or a Metaspace
// pre-tokenizer). Anything else is refused by name rather than approximated (FORMATS.md §1.7.3).

#include "io/tokenize/tokenizer_json.h"

#include "base/api/strict_json.h"
#include "io/tokenize/byte_level_bpe.h"
#include "io/tokenize/metaspace_bpe.h"
#include "io/tokenize/tokenizer_common.h"
#include "io/tokenize/wordpiece.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace attnscope::engine {

namespace {

using Json = nlohmann::json;

/// Thrown inside this file only; makeTokenizerFromJson turns it into an Error.
struct FieldError {
    ErrorCode code;
    std::string message;
};

[[noreturn]] void fail(const std::string& where, const std::string& rule,
                       ErrorCode code = ErrorCode::InvalidInput) {
    throw FieldError{code, where + ": " + rule};
}

[[noreturn]] void unsupported(const std::string& where, const std::string& what) {
    fail(where, what + " not supported (AttnScope reads the BERT WordPiece shape, byte-level BPE: GPT-2/RoBERTa's, "
                       "or a Split regex then ByteLevel as Llama 3 and Qwen have, and SentencePiece-style BPE with "
                       "byte fallback as Llama 2, Mistral and Gemma have)",
         ErrorCode::Unsupported);
}

const Json* member(const Json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool boolField(const Json& object, const char* key, bool fallback, const std::string& where) {
    const Json* v = member(object, key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(where + "." + key, "must be true or false");
    return v->get<bool>();
}

std::string stringField(const Json& object, const char* key, const std::string& fallback, const std::string& where) {
    const Json* v = member(object, key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) fail(where + "." + key, "must be a string");
    return v->get<std::string>();
}

std::int64_t idValue(const Json& v, const std::string& where) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxVocabularyId))
        fail(where, "must be an integer id in 0.." + std::to_string(kMaxVocabularyId));
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
}

/// The "type" of a component, "" when the component is null or absent. A one-element "Sequence"
/// is unwrapped (some files wrap a single pre-tokenizer that way).
std::string componentType(const Json& root, const char* key, const Json** component) {
    const std::string where = std::string("$.") + key;
    const Json* c = member(root, key);
    *component = c;
    if (c == nullptr) return {};
    if (!c->is_object()) fail(where, "must be an object or null");
    std::string type = stringField(*c, "type", "", where);
    if (type.empty()) fail(where, "has no \"type\"");
    if (type == "Sequence") {
        const char* listKey = c->contains("pretokenizers") ? "pretokenizers"
                              : c->contains("normalizers") ? "normalizers"
                              : c->contains("processors")  ? "processors"
                                                           : "decoders";
        const Json* list = member(*c, listKey);
        if (list == nullptr || !list->is_array()) fail(where, "a Sequence needs a list");
        if (list->empty()) {
            *component = nullptr;
            return {};
        }
        if (list->size() != 1 || !(*list)[0].is_object())
            unsupported(where, "a Sequence of " + std::to_string(list->size()) + " components is");
        *component = &(*list)[0];
        type = stringField((*list)[0], "type", "", where + "[0]");
    }
    return type;
}

struct AddedToken {
    std::int64_t id;
    std::string content;
    bool special;
};

std::vector<AddedToken> parseAddedTokens(const Json& root) {
    std::vector<AddedToken> out;
    const Json* list = member(root, "added_tokens");
    if (list == nullptr) return out;
    if (!list->is_array()) fail("$.added_tokens", "must be a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string where = "$.added_tokens[" + std::to_string(i) + "]";
        const Json& t = (*list)[i];
        if (!t.is_object()) fail(where, "must be an object");
        const Json* id = member(t, "id");
        if (id == nullptr) fail(where + ".id", "is missing");
        AddedToken token{idValue(*id, where + ".id"), stringField(t, "content", "", where), boolField(t, "special", false, where)};
        if (token.content.empty()) fail(where + ".content", "must be a non-empty string");
        if (auto error = checkVocabString(token.content, where + ".content")) fail(where + ".content", "invalid token");
        out.push_back(std::move(token));
    }
    return out;
}

/// Added tokens are part of the vocabulary even when model.vocab lacks them.
void addToVocab(Vocab& vocab, const std::vector<AddedToken>& added) {
    for (const AddedToken& t : added) {
        const std::int64_t existing = vocab.find(t.content);
        if (existing == t.id) continue;
        if (existing >= 0)
            fail("$.added_tokens", quoteForMessage(t.content) + " has id " + std::to_string(t.id) +
                                       " but the vocabulary gives it " + std::to_string(existing));
        const auto id = static_cast<std::size_t>(t.id);
        if (id < vocab.tokens.size() && vocab.ids.count(vocab.tokens[id]) != 0 &&
            vocab.ids.at(vocab.tokens[id]) == t.id)
            fail("$.added_tokens", "id " + std::to_string(t.id) + " of " + quoteForMessage(t.content) +
                                       " already belongs to " + quoteForMessage(vocab.tokens[id]));
        if (id >= vocab.tokens.size()) vocab.tokens.resize(id + 1);
        vocab.tokens[id] = t.content;
        vocab.ids[t.content] = t.id;
    }
}

Vocab parseVocab(const Json& model) {
    const Json* v = member(model, "vocab");
    if (v == nullptr) fail("$.model.vocab", "is missing");
    auto vocab = vocabFromJsonObject(*v, "$.model.vocab");
    if (!vocab) throw FieldError{vocab.error().code, vocab.error().message};
    return std::move(vocab).value();
}

/// [name, id] as in BertProcessing and RobertaProcessing.
TemplateItem namedSpecial(const Json& processor, const char* key, const std::string& where) {
    const Json* pair = member(processor, key);
    if (pair == nullptr || !pair->is_array() || pair->size() != 2 || !(*pair)[0].is_string())
        fail(where + "." + key, "must be [token, id]");
    return TemplateItem{false, (*pair)[0].get<std::string>(), idValue((*pair)[1], where + "." + key + "[1]"), 0};
}

std::vector<TemplateItem> parseTemplateProcessing(const Json& processor, const std::string& where) {
    const Json* single = member(processor, "single");
    if (single == nullptr || !single->is_array()) fail(where + ".single", "must be a list");
    const Json* specials = member(processor, "special_tokens");
    std::vector<TemplateItem> items;
    for (std::size_t i = 0; i < single->size(); ++i) {
        const std::string at = where + ".single[" + std::to_string(i) + "]";
        const Json& piece = (*single)[i];
        if (!piece.is_object() || piece.size() != 1) fail(at, "must be {\"SpecialToken\": …} or {\"Sequence\": …}");
        if (const Json* seq = member(piece, "Sequence")) {
            if (!seq->is_object()) fail(at + ".Sequence", "must be an object");
            if (stringField(*seq, "id", "A", at + ".Sequence") != "A") fail(at + ".Sequence.id", "must be \"A\" in a single template");
            const Json* type = member(*seq, "type_id");
            items.push_back(TemplateItem{true, {}, -1, type == nullptr ? 0 : idValue(*type, at + ".Sequence.type_id")});
            continue;
        }
        const Json* special = member(piece, "SpecialToken");
        if (special == nullptr || !special->is_object()) fail(at, "must be {\"SpecialToken\": …} or {\"Sequence\": …}");
        const std::string name = stringField(*special, "id", "", at + ".SpecialToken");
        const Json* type = member(*special, "type_id");
        const std::int64_t typeId = type == nullptr ? 0 : idValue(*type, at + ".SpecialToken.type_id");
        const Json* entry = specials == nullptr ? nullptr : member(*specials, name.c_str());
        if (entry == nullptr || !entry->is_object())
            fail(at, "special token " + quoteForMessage(name) + " is not listed in special_tokens");
        const Json* ids = member(*entry, "ids");
        const Json* tokens = member(*entry, "tokens");
        if (ids == nullptr || tokens == nullptr || !ids->is_array() || !tokens->is_array() || ids->empty() ||
            ids->size() != tokens->size())
            fail(where + ".special_tokens." + name, "needs equally long, non-empty \"ids\" and \"tokens\" lists");
        for (std::size_t k = 0; k < ids->size(); ++k) {
            if (!(*tokens)[k].is_string()) fail(where + ".special_tokens." + name + ".tokens", "must hold strings");
            items.push_back(TemplateItem{false, (*tokens)[k].get<std::string>(),
                                         idValue((*ids)[k], where + ".special_tokens." + name + ".ids"), typeId});
        }
    }
    return items;
}

/// Template from post_processor; `byteLevelOk` accepts a ByteLevel processor (no specials).
std::vector<TemplateItem> parsePostProcessor(const Json& root, bool byteLevelOk) {
    const std::string where = "$.post_processor";
    // Llama 3.x: Sequence [ByteLevel (offsets only), TemplateProcessing (<|begin_of_text|>)]
    if (const Json* sequence = member(root, "post_processor");
        byteLevelOk && sequence != nullptr && sequence->is_object() && stringField(*sequence, "type", "", where) == "Sequence") {
        const Json* list = member(*sequence, "processors");
        if (list == nullptr || !list->is_array()) fail(where, "a Sequence needs a list");
        std::vector<TemplateItem> items;
        for (std::size_t i = 0; i < list->size(); ++i) {
            const std::string at = where + ".processors[" + std::to_string(i) + "]";
            const Json& p = (*list)[i];
            const std::string type = p.is_object() ? stringField(p, "type", "", at) : std::string();
            if (type == "ByteLevel") continue;
            if (type != "TemplateProcessing" || !items.empty())
                unsupported(at, "post-processor " + quoteForMessage(type) + " in a Sequence (ByteLevel and one TemplateProcessing are read) is");
            items = parseTemplateProcessing(p, at);
        }
        return items;
    }
    const Json* processor = nullptr;
    const std::string type = componentType(root, "post_processor", &processor);
    if (type.empty() || (byteLevelOk && type == "ByteLevel")) return {};
    if (type == "TemplateProcessing") return parseTemplateProcessing(*processor, where);
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        TemplateItem cls = namedSpecial(*processor, "cls", where);
        TemplateItem sep = namedSpecial(*processor, "sep", where);
        return {cls, TemplateItem{true, {}, -1, 0}, sep};
    }
    unsupported(where, "post-processor type " + quoteForMessage(type) + " is");
}

void checkDecoder(const Json& root, const char* expected) {
    const Json* decoder = nullptr;
    const std::string type = componentType(root, "decoder", &decoder);
    if (!type.empty() && type != expected) unsupported("$.decoder", "decoder type " + quoteForMessage(type) + " is");
}

Result<std::shared_ptr<const ModelTokenizer>> buildWordPiece(const Json& root, const Json& model,
                                                             const std::vector<AddedToken>& added,
                                                             const std::string& source) {
    WordPieceData data;
    data.options.source = source;
    data.vocab = parseVocab(model);
    addToVocab(data.vocab, added);
    data.options.unkToken = stringField(model, "unk_token", "[UNK]", "$.model");
    data.options.continuingSubwordPrefix = stringField(model, "continuing_subword_prefix", "##", "$.model");
    if (const Json* max = member(model, "max_input_chars_per_word"))
        data.options.maxInputCharsPerWord = idValue(*max, "$.model.max_input_chars_per_word");

    const Json* normalizer = nullptr;
    const std::string normalizerType = componentType(root, "normalizer", &normalizer);
    if (normalizerType == "BertNormalizer") {
        data.options.cleanText = boolField(*normalizer, "clean_text", true, "$.normalizer");
        data.options.handleChineseChars = boolField(*normalizer, "handle_chinese_chars", true, "$.normalizer");
        data.options.lowercase = boolField(*normalizer, "lowercase", true, "$.normalizer");
        if (const Json* strip = member(*normalizer, "strip_accents")) {
            if (!strip->is_boolean()) fail("$.normalizer.strip_accents", "must be true, false or null");
            data.options.stripAccents = strip->get<bool>();
        }
    } else if (normalizerType.empty()) {
        data.options.cleanText = false;
        data.options.handleChineseChars = false;
        data.options.lowercase = false;
        data.options.stripAccents = false;
    } else {
        unsupported("$.normalizer", "normalizer type " + quoteForMessage(normalizerType) + " with WordPiece is");
    }

    const Json* pre = nullptr;
    const std::string preType = componentType(root, "pre_tokenizer", &pre);
    if (preType != "BertPreTokenizer")
        unsupported("$.pre_tokenizer", "pre-tokenizer type " + quoteForMessage(preType.empty() ? "null" : preType) +
                                           " with WordPiece is");
    checkDecoder(root, "WordPiece");
    data.options.singleTemplate = parsePostProcessor(root, false);
    data.options.neverSplit.clear();
    for (const AddedToken& t : added)
        if (t.special) data.options.neverSplit.push_back(t.content);
    return buildWordPieceTokenizer(std::move(data));
}

/// A ByteLevel pre-tokenizer's fields (tokenizers' defaults: add_prefix_space true, use_regex true).
void readByteLevel(const Json& pre, const std::string& where, ByteLevelBpeOptions& options) {
    options.addPrefixSpace = boolField(pre, "add_prefix_space", true, where);
    options.useRegex = boolField(pre, "use_regex", true, where);
}

/// ByteLevel alone (GPT-2's regex inside), or Sequence [Split {Regex, Isolated}…, ByteLevel
/// {use_regex: false}]: Llama 3's and Qwen's own regex (DeepSeek's three), then bytes to symbols.
void readBytePreTokenizer(const Json& root, ByteLevelBpeOptions& options) {
    const std::string where = "$.pre_tokenizer";
    const Json* pre = member(root, "pre_tokenizer");
    const Json* list = pre != nullptr && pre->is_object() ? member(*pre, "pretokenizers") : nullptr;
    if (list == nullptr || !list->is_array() || list->size() < 2) {
        const std::string type = componentType(root, "pre_tokenizer", &pre);
        if (type != "ByteLevel")
            unsupported(where, "pre-tokenizer type " + quoteForMessage(type.empty() ? "null" : type) + " with BPE is");
        readByteLevel(*pre, where, options);
        return;
    }
    const std::size_t last = list->size() - 1;
    const Json& bytes = (*list)[last];
    const std::string bytesAt = where + ".pretokenizers[" + std::to_string(last) + "]";
    if (!bytes.is_object() || stringField(bytes, "type", "", bytesAt) != "ByteLevel")
        unsupported(where, "a Sequence other than [Split…, ByteLevel] is");
    options.splitPatterns.clear();
    for (std::size_t i = 0; i < last; ++i) {
        const Json& split = (*list)[i];
        const std::string splitAt = where + ".pretokenizers[" + std::to_string(i) + "]";
        if (!split.is_object() || stringField(split, "type", "", splitAt) != "Split")
            unsupported(where, "a Sequence other than [Split…, ByteLevel] is");
        const Json* pattern = member(split, "pattern");
        const Json* regex = pattern != nullptr && pattern->is_object() ? member(*pattern, "Regex") : nullptr;
        if (regex == nullptr || !regex->is_string() || regex->get<std::string>().empty())
            unsupported(splitAt + ".pattern", "a Split pattern other than a non-empty {\"Regex\": …} is");
        if (stringField(split, "behavior", "", splitAt) != "Isolated")
            unsupported(splitAt + ".behavior", "a Split behavior other than \"Isolated\" is");
        if (boolField(split, "invert", false, splitAt)) unsupported(splitAt + ".invert", "an inverted Split is");
        options.splitPatterns.push_back(regex->get<std::string>());
    }
    readByteLevel(bytes, bytesAt, options);
    if (options.useRegex) unsupported(bytesAt + ".use_regex", "GPT-2's regex after a Split is");
    options.useRegex = true;
}

std::vector<MergeRule> parseMerges(const Json& model, const std::string& source) {
    const Json* merges = member(model, "merges");
    if (merges == nullptr || !merges->is_array()) fail("$.model.merges", "must be a list");
    std::vector<MergeRule> out;
    out.reserve(merges->size());
    for (std::size_t i = 0; i < merges->size(); ++i) {
        const std::string where = "$.model.merges[" + std::to_string(i) + "]";
        const Json& m = (*merges)[i];
        if (m.is_string()) {  // legacy "left right"
            const std::string s = m.get<std::string>();
            const std::size_t space = s.find(' ');
            if (space == std::string::npos || space == 0 || space + 1 >= s.size() ||
                s.find(' ', space + 1) != std::string::npos)
                fail(where, "expected \"left right\" (two tokens, one space), found " + quoteForMessage(s));
            out.push_back(MergeRule{s.substr(0, space), s.substr(space + 1), source + " " + where});
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // tokenizers ≥ 0.20
            out.push_back(MergeRule{m[0].get<std::string>(), m[1].get<std::string>(), source + " " + where});
            if (out.back().left.empty() || out.back().right.empty()) fail(where, "merge parts must not be empty");
        } else {
            fail(where, "a merge must be \"left right\" or [\"left\", \"right\"]");
        }
    }
    return out;
}

/// The components of a Sequence (or the one component itself); empty for null.
std::vector<const Json*> componentList(const Json& root, const char* key, const char* listKey) {
    const Json* c = member(root, key);
    if (c == nullptr) return {};
    const std::string where = std::string("$.") + key;
    if (!c->is_object()) fail(where, "must be an object or null");
    if (stringField(*c, "type", "", where) != "Sequence") return {c};
    const Json* list = member(*c, listKey);
    if (list == nullptr || !list->is_array()) fail(where, "a Sequence needs a list");
    std::vector<const Json*> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
        if (!(*list)[i].is_object()) fail(where + "." + listKey + "[" + std::to_string(i) + "]", "must be an object");
        out.push_back(&(*list)[i]);
    }
    return out;
}

bool hasComponent(const Json& root, const char* key, const char* listKey, std::initializer_list<const char*> types) {
    for (const Json* c : componentList(root, key, listKey)) {
        const Json* type = member(*c, "type");
        if (type == nullptr || !type->is_string()) continue;
        for (const char* t : types)
            if (type->get<std::string>() == t) return true;
    }
    return false;
}

/// Llama 2's and Mistral's shape: BPE with byte fallback over text whose spaces became "▁".
bool isMetaspaceShape(const Json& root, const Json& model) {
    return boolField(model, "byte_fallback", false, "$.model") ||
           hasComponent(root, "normalizer", "normalizers", {"Prepend", "Replace"}) ||
           hasComponent(root, "pre_tokenizer", "pretokenizers", {"Metaspace"}) ||
           hasComponent(root, "decoder", "decoders", {"Metaspace", "ByteFallback"});
}

/// Sequence [Prepend "▁", Replace " " → "▁"] (tokenizers ≥ 0.14's Llama 2 files) or the Replace
/// alone (Gemma's). Returns whether the normalizer replaces spaces.
bool readMetaspaceNormalizer(const Json& root, MetaspaceBpeOptions& options) {
    bool prepends = false, replaces = false;
    const std::vector<const Json*> list = componentList(root, "normalizer", "normalizers");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = list.size() == 1 ? "$.normalizer" : "$.normalizer.normalizers[" + std::to_string(i) + "]";
        const Json& c = *list[i];
        const std::string type = stringField(c, "type", "", at);
        if (type == "Prepend") {
            options.replacement = stringField(c, "prepend", "", at);
            if (options.replacement.empty()) fail(at + ".prepend", "must be a non-empty string");
            prepends = true;
        } else if (type == "Replace") {
            const Json* pattern = member(c, "pattern");
            const Json* plain = pattern != nullptr && pattern->is_object() ? member(*pattern, "String") : nullptr;
            if (plain == nullptr || !plain->is_string() || plain->get<std::string>() != " ")
                unsupported(at + ".pattern", "a Replace of anything but {\"String\": \" \"} is");
            const std::string content = stringField(c, "content", "", at);
            if (prepends && content != options.replacement)
                fail(at + ".content", "must be the prepended " + quoteForMessage(options.replacement));
            options.replacement = content;
            replaces = true;
        } else {
            unsupported(at, "normalizer type " + quoteForMessage(type) + " with SentencePiece-style BPE is");
        }
    }
    // (a Replace alone is Gemma's shape: spaces become "▁", nothing goes before the text)
    if (prepends && !replaces) unsupported("$.normalizer", "a Prepend without a Replace of spaces is");
    if (replaces && options.replacement.empty()) fail("$.normalizer", "the replacement must not be empty");
    options.prepend = prepends ? MetaspacePrepend::Always : MetaspacePrepend::Never;
    return replaces;
}

/// A Split at {"String": " "} (Gemma's pre-tokenizer after its normalizer replaced every space).
bool isSplitAtSpace(const Json& split) {
    const Json* pattern = member(split, "pattern");
    const Json* plain = pattern != nullptr && pattern->is_object() ? member(*pattern, "String") : nullptr;
    return plain != nullptr && plain->is_string() && plain->get<std::string>() == " ";
}

/// Metaspace {replacement, prepend_scheme | add_prefix_space, split} (older Llama 2 files, Mistral v0.3).
void readMetaspacePreTokenizer(const Json& root, bool normalizerReplaces, MetaspaceBpeOptions& options) {
    const Json* pre = nullptr;
    const std::string type = componentType(root, "pre_tokenizer", &pre);
    if (type.empty()) {
        if (!normalizerReplaces)
            unsupported("$.pre_tokenizer", "SentencePiece-style BPE without a Metaspace pre-tokenizer or a normalizer replacing spaces is");
        return;
    }
    const std::string where = "$.pre_tokenizer";
    if (type == "Split" && normalizerReplaces && isSplitAtSpace(*pre)) return;  // Gemma's: no space is left to split at
    if (type != "Metaspace" || normalizerReplaces)
        unsupported(where, "pre-tokenizer type " + quoteForMessage(type) + " with SentencePiece-style BPE is");
    options.replacement = stringField(*pre, "replacement", "\u2581", where);
    if (options.replacement.empty()) fail(where + ".replacement", "must not be empty");
    if (const Json* scheme = member(*pre, "prepend_scheme")) {
        const std::string s = scheme->is_string() ? scheme->get<std::string>() : std::string();
        if (s == "always") options.prepend = MetaspacePrepend::IfMissing;
        else if (s == "first") options.prepend = MetaspacePrepend::First;
        else if (s == "never") options.prepend = MetaspacePrepend::Never;
        else fail(where + ".prepend_scheme", "must be \"always\", \"first\" or \"never\"");
    } else {
        options.prepend = boolField(*pre, "add_prefix_space", true, where) ? MetaspacePrepend::IfMissing : MetaspacePrepend::Never;
    }
    options.splitAtReplacement = boolField(*pre, "split", true, where);
}

void checkMetaspaceDecoder(const Json& root) {
    const std::vector<const Json*> list = componentList(root, "decoder", "decoders");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = "$.decoder" + (list.size() == 1 ? std::string() : ".decoders[" + std::to_string(i) + "]");
        const std::string type = stringField(*list[i], "type", "", at);
        if (type != "Metaspace" && type != "Replace" && type != "ByteFallback" && type != "Fuse" && type != "Strip")
            unsupported(at, "decoder type " + quoteForMessage(type) + " with SentencePiece-style BPE is");
    }
}

Result<std::shared_ptr<const ModelTokenizer>> buildMetaspaceBpe(const Json& root, const Json& model,
                                                                const std::vector<AddedToken>& added,
                                                                const std::string& source) {
    MetaspaceBpeData data;
    data.options.source = source;
    data.options.byteFallback = boolField(model, "byte_fallback", false, "$.model");
    data.options.fuseUnk = boolField(model, "fuse_unk", false, "$.model");
    data.options.ignoreMerges = boolField(model, "ignore_merges", false, "$.model");
    data.options.unkToken = stringField(model, "unk_token", "", "$.model");
    data.vocab = parseVocab(model);
    addToVocab(data.vocab, added);
    data.merges = parseMerges(model, source);
    data.special.assign(data.vocab.tokens.size(), false);
    for (const AddedToken& t : added) {
        data.options.specialTokens.push_back(t.content);
        if (t.special) data.special[static_cast<std::size_t>(t.id)] = true;
    }
    const bool replaces = readMetaspaceNormalizer(root, data.options);
    readMetaspacePreTokenizer(root, replaces, data.options);
    checkMetaspaceDecoder(root);
    data.options.singleTemplate = parsePostProcessor(root, false);
    return buildMetaspaceBpeTokenizer(std::move(data));
}

Result<std::shared_ptr<const ModelTokenizer>> buildBpe(const Json& root, const Json& model,
                                                       const std::vector<AddedToken>& added, const std::string& source) {
    ByteLevelBpeData data;
    data.options.vocabSource = source + " $.model.vocab";
    data.options.mergesSource = source + " $.model.merges";
    if (const Json* dropout = member(model, "dropout")) {
        if (!dropout->is_number() || dropout->get<double>() != 0.0) unsupported("$.model.dropout", "BPE dropout is");
    }
    if (!stringField(model, "continuing_subword_prefix", "", "$.model").empty())
        unsupported("$.model.continuing_subword_prefix", "a BPE continuing_subword_prefix is");
    if (!stringField(model, "end_of_word_suffix", "", "$.model").empty())
        unsupported("$.model.end_of_word_suffix", "a BPE end_of_word_suffix is");
    if (isMetaspaceShape(root, model)) return buildMetaspaceBpe(root, model, added, source);
    data.options.ignoreMerges = boolField(model, "ignore_merges", false, "$.model");
    data.vocab = parseVocab(model);
    addToVocab(data.vocab, added);
    data.merges = parseMerges(model, source);

    const Json* normalizer = nullptr;
    const std::string normalizerType = componentType(root, "normalizer", &normalizer);
    if (!normalizerType.empty() && normalizerType != "NFC")
        unsupported("$.normalizer", "normalizer type " + quoteForMessage(normalizerType) + " with byte-level BPE is");
    data.options.nfc = normalizerType == "NFC";
    readBytePreTokenizer(root, data.options);
    checkDecoder(root, "ByteLevel");
    data.options.singleTemplate = parsePostProcessor(root, true);
    // GPT-2's shape keeps typed specials as text (as gpt-3-encoder, docs/TOKENIZERS.md); the Split
    // shape (Llama 3, Qwen) takes every added token found in the text as that token, as HF's
    // tokenizers and transformers.js do for these models.
    const bool splitShape = !data.options.splitPatterns.empty();
    data.options.recognizeSpecialTokensInText = splitShape;
    for (const AddedToken& t : added)
        if (t.special || splitShape) data.options.specialTokens.push_back(t.content);
    return buildByteLevelBpeTokenizer(std::move(data));
}

}  // namespace

Result<std::shared_ptr<const ModelTokenizer>> makeTokenizerFromJson(const std::string& tokenizerJson,
                                                                    const std::string& source) {
    std::string text = tokenizerJson;
    if (auto error = sniffTokenizerFile(text, source)) return *error;
    auto parsed = parseStrictJson(text, source);
    if (!parsed) return parsed.error();
    return makeTokenizerFromJsonValue(parsed.value(), source);
}

Result<std::shared_ptr<const ModelTokenizer>> makeTokenizerFromJsonValue(const nlohmann::json& root, const std::string& source) {
    try {
        if (!root.is_object()) fail("$", "must be a JSON object");
        const Json* model = member(root, "model");
        if (model == nullptr || !model->is_object()) fail("$.model", "is missing or not an object");
        std::string type = stringField(*model, "type", "", "$.model");
        if (type.empty()) {  // older files leave the model untagged
            if (model->contains("merges")) type = "BPE";
            else if (model->contains("max_input_chars_per_word") || model->contains("continuing_subword_prefix"))
                type = "WordPiece";
            else fail("$.model", "has no \"type\" and is neither BPE nor WordPiece");
        }
        const std::vector<AddedToken> added = parseAddedTokens(root);
        if (type == "WordPiece") return buildWordPiece(root, *model, added, source);
        if (type == "BPE") return buildBpe(root, *model, added, source);
        throw FieldError{ErrorCode::Unsupported, source + ": tokenizer type " + quoteForMessage(type) +
                                                     " not supported (AttnScope reads WordPiece and byte-level BPE)"};
    } catch (const FieldError& e) {
        const bool prefixed = e.message.rfind(source, 0) == 0;
        return makeError(e.code, prefixed ? e.message : source + " " + e.message);
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidInput, source + ": " + e.what());
    }
}

}  // namespace attnscope::engine
