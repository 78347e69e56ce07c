#include "io/tokenize/gguf_tokenizer.h"

#include "io/tokenize/metaspace_bpe.h"
#include "io/tokenize/tokenizer_json.h"
#include "io/tokenize/utf8.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;

// llama.cpp's token types (llama_token_type)
constexpr std::int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

// llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), by the names its converter writes.
const char* const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

class Keys {
public:
    Keys(const GgufHeader& header, std::string source) : m_header(header), m_source(std::move(source)) {}
    const GgufValue* find(const std::string& key) const {
        const auto it = m_header.metadata.find("tokenizer.ggml." + key);
        return it == m_header.metadata.end() ? nullptr : &it->second;
    }
    Error fail(const std::string& key, const std::string& rule, ErrorCode code = ErrorCode::InvalidInput) const {
        return Error{code, m_source + ": GGUF key 'tokenizer.ggml." + key + "' " + rule};
    }
    Result<std::string> text(const std::string& key, const std::string& fallback) const {
        const GgufValue* v = find(key);
        if (!v) return fallback;
        if (const auto* s = std::get_if<std::string>(&v->value)) return *s;
        return fail(key, "must be a string");
    }
    Result<std::int64_t> id(const std::string& key) const {
        const GgufValue* v = find(key);
        if (!v) return std::int64_t{-1};
        if (const auto* u = std::get_if<std::uint64_t>(&v->value)) return static_cast<std::int64_t>(*u);
        if (const auto* i = std::get_if<std::int64_t>(&v->value)) return *i;
        return fail(key, "must be an integer");
    }
    Result<bool> flag(const std::string& key, bool fallback) const {
        const GgufValue* v = find(key);
        if (!v) return fallback;
        if (const auto* b = std::get_if<bool>(&v->value)) return *b;
        return fail(key, "must be true or false");
    }
    /// An array of strings (`required`: missing is an error).
    Result<std::vector<std::string>> strings(const std::string& key, bool required) const {
        const GgufValue* v = find(key);
        std::vector<std::string> out;
        if (!v) {
            if (required) return fail(key, "is missing");
            return out;
        }
        const auto* list = std::get_if<GgufValue::Array>(&v->value);
        if (!list) return fail(key, "must be a list of strings");
        out.reserve(list->size());
        for (const auto& item : *list) {
            const auto* s = std::get_if<std::string>(&item);
            if (!s) return fail(key, "must be a list of strings");
            out.push_back(*s);
        }
        return out;
    }
    /// An array of numbers, of `count` entries when present.
    Result<std::vector<double>> numbers(const std::string& key, std::size_t count) const {
        const GgufValue* v = find(key);
        std::vector<double> out;
        if (!v) return out;
        const auto* list = std::get_if<GgufValue::Array>(&v->value);
        if (!list || list->size() != count) return fail(key, "must list one number per token (" + std::to_string(count) + ")");
        for (const auto& item : *list) {
            if (const auto* d = std::get_if<double>(&item)) out.push_back(*d);
            else if (const auto* u = std::get_if<std::uint64_t>(&item)) out.push_back(static_cast<double>(*u));
            else if (const auto* i = std::get_if<std::int64_t>(&item)) out.push_back(static_cast<double>(*i));
            else return fail(key, "must be a list of numbers");
        }
        return out;
    }

private:
    const GgufHeader& m_header;
    std::string m_source;
};

struct Vocabulary {
    std::vector<std::string> tokens;
    std::vector<double> types;  ///< llama.cpp's token types (1 when the file lists none)
};

// Control tokens are special added tokens, user-defined ones added tokens found in the text as
// themselves (as llama.cpp and HF's added_tokens treat them).
Json addedTokens(const Vocabulary& v) {
    Json added = Json::array();
    for (std::size_t id = 0; id < v.tokens.size(); ++id) {
        const auto type = static_cast<std::int64_t>(v.types[id]);
        if (type != kControl && type != kUserDefined && type != kUnknown) continue;
        added.push_back(Json{{"id", id}, {"content", v.tokens[id]}, {"single_word", false}, {"lstrip", false},
                             {"rstrip", false}, {"normalized", false}, {"special", type != kUserDefined}});
    }
    return added;
}

Json vocabObject(const Vocabulary& v) {
    Json vocab = Json::object();
    for (std::size_t id = 0; id < v.tokens.size(); ++id)
        if (!vocab.contains(v.tokens[id])) vocab[v.tokens[id]] = id;
    return vocab;
}

// BOS first and EOS last, as add_bos_token / add_eos_token say.
Json postProcessor(const Vocabulary& v, std::int64_t bos, std::int64_t eos, bool addBos, bool addEos) {
    Json single = Json::array(), specials = Json::object();
    auto special = [&](std::int64_t id) {
        const std::string& token = v.tokens[static_cast<std::size_t>(id)];
        single.push_back(Json{{"SpecialToken", Json{{"id", token}, {"type_id", 0u}}}});
        specials[token] = Json{{"id", token}, {"ids", Json::array({static_cast<std::uint64_t>(id)})}, {"tokens", Json::array({token})}};
    };
    if (addBos && bos >= 0) special(bos);
    single.push_back(Json{{"Sequence", Json{{"id", "A"}, {"type_id", 0u}}}});
    if (addEos && eos >= 0) special(eos);
    return Json{{"type", "TemplateProcessing"}, {"single", single}, {"pair", single}, {"special_tokens", specials}};
}

// Bytes of the character at `at` (1 for a byte that is not UTF-8: pieces are split between bytes then).
std::size_t characterLength(const std::string& s, std::size_t at) {
    const Utf8Step step = decodeUtf8(reinterpret_cast<const unsigned char*>(s.data()), s.size(), at);
    return step.length > 0 ? static_cast<std::size_t>(step.length) : 1;
}

// SentencePiece BPE has no merges, only each piece's score: a pair merges when the pieces' join is
// a piece, the higher its score the sooner, leftmost first among equal scores (llama.cpp's
// llm_tokenizer_spm). As merges: every split of every piece into two pieces, ranked by the joined
// piece's score — equal scores share a rank, so the merger takes the leftmost.
std::vector<MergeRule> mergesFromScores(const Vocabulary& v, const std::vector<double>& scores, const std::string& source) {
    std::unordered_map<std::string, std::int64_t> ids;
    for (std::size_t id = 0; id < v.tokens.size(); ++id) ids.emplace(v.tokens[id], static_cast<std::int64_t>(id));
    struct Candidate {
        double score;
        std::int64_t left, right;
    };
    std::vector<Candidate> candidates;
    for (std::size_t id = 0; id < v.tokens.size(); ++id) {
        const auto type = static_cast<std::int64_t>(v.types[id]);
        if (type != kNormal && type != kUserDefined) continue;
        const std::string& piece = v.tokens[id];
        for (std::size_t at = characterLength(piece, 0); at < piece.size(); at += characterLength(piece, at)) {
            const auto left = ids.find(piece.substr(0, at)), right = ids.find(piece.substr(at));
            if (left != ids.end() && right != ids.end()) candidates.push_back({scores[id], left->second, right->second});
        }
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    std::vector<MergeRule> merges;
    merges.reserve(candidates.size());
    std::int32_t rank = -1;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (i == 0 || candidates[i].score != candidates[i - 1].score) ++rank;
        merges.push_back(MergeRule{v.tokens[static_cast<std::size_t>(candidates[i].left)],
                                   v.tokens[static_cast<std::size_t>(candidates[i].right)], source + " tokenizer.ggml.scores", rank});
    }
    return merges;
}

struct Specials {
    std::int64_t bos = -1, eos = -1;
    bool addBos = false, addEos = false;
};

std::vector<TemplateItem> singleTemplate(const Specials& s) {
    std::vector<TemplateItem> items;
    if (s.addBos && s.bos >= 0) items.push_back(TemplateItem{false, "", s.bos, 0});
    items.push_back(TemplateItem{true, "", -1, 0});
    if (s.addEos && s.eos >= 0) items.push_back(TemplateItem{false, "", s.eos, 0});
    return items;
}

Result<std::shared_ptr<const ModelTokenizer>> spmTokenizer(const Keys& keys, const Vocabulary& v, const Specials& specials,
                                                           const std::string& source) {
    auto scores = keys.numbers("scores", v.tokens.size());
    if (!scores) return scores.error();
    if (scores.value().empty()) return keys.fail("scores", "is missing (a `llama` tokenizer ranks its pieces by them)");
    auto prefix = keys.flag("add_space_prefix", true);
    if (!prefix) return prefix.error();
    auto unk = keys.id("unknown_token_id");
    if (!unk) return unk.error();
    MetaspaceBpeData data;
    data.options.source = source;
    data.options.prepend = prefix.value() ? MetaspacePrepend::Always : MetaspacePrepend::Never;
    data.options.byteFallback = true;
    data.options.fuseUnk = true;
    if (unk.value() >= 0 && unk.value() < static_cast<std::int64_t>(v.tokens.size()))
        data.options.unkToken = v.tokens[static_cast<std::size_t>(unk.value())];
    data.vocab.tokens = v.tokens;
    for (std::size_t id = 0; id < v.tokens.size(); ++id) data.vocab.ids.emplace(v.tokens[id], static_cast<std::int64_t>(id));
    data.merges = mergesFromScores(v, scores.value(), source);
    data.special.assign(v.tokens.size(), false);
    for (std::size_t id = 0; id < v.tokens.size(); ++id) {
        const auto type = static_cast<std::int64_t>(v.types[id]);
        if (type != kControl && type != kUserDefined && type != kUnknown) continue;
        data.options.specialTokens.push_back(v.tokens[id]);
        data.special[id] = type != kUserDefined;
    }
    data.options.singleTemplate = singleTemplate(specials);
    return buildMetaspaceBpeTokenizer(std::move(data));
}

Result<Json> bpeTokenizer(const Keys& keys, const Vocabulary& v, Json& root) {
    auto merges = keys.strings("merges", true);
    if (!merges) return merges.error();
    auto pre = keys.text("pre", "default");
    if (!pre) return pre.error();
    std::vector<std::string> patterns;
    if (!ggufPreTokenizerPatterns(pre.value(), patterns))
        return keys.fail("pre", "'" + pre.value() + "' is not read (llama-bpe, llama3, qwen2, gpt-2 and default are)", ErrorCode::Unsupported);
    Json mergeList = Json::array();
    for (const auto& m : merges.value()) mergeList.push_back(m);
    root["model"] = Json{{"type", "BPE"}, {"vocab", vocabObject(v)}, {"merges", mergeList}, {"dropout", nullptr},
                         {"ignore_merges", pre.value() == "llama-bpe" || pre.value() == "llama3"}};
    root["normalizer"] = pre.value() == "qwen2" ? Json{{"type", "NFC"}} : Json(nullptr);
    Json byteLevel{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", patterns.empty()}};
    if (patterns.empty()) {
        root["pre_tokenizer"] = byteLevel;
    } else {
        Json list = Json::array();
        for (const auto& p : patterns)
            list.push_back(Json{{"type", "Split"}, {"pattern", Json{{"Regex", p}}}, {"behavior", "Isolated"}, {"invert", false}});
        list.push_back(byteLevel);
        root["pre_tokenizer"] = Json{{"type", "Sequence"}, {"pretokenizers", list}};
    }
    root["decoder"] = Json{{"type", "ByteLevel"}};
    return root;
}

}  // namespace

bool ggufPreTokenizerPatterns(const std::string& pre, std::vector<std::string>& patterns) {
    patterns.clear();
    if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") patterns = {kLlama3};
    else if (pre == "qwen2") patterns = {kQwen2};
    else if (pre == "default") patterns = {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};  // llama.cpp's own default
    else if (pre != "gpt-2" && pre != "gpt2") return false;
    return true;
}

Result<std::shared_ptr<const ModelTokenizer>> makeGgufTokenizer(const GgufHeader& header, const std::string& source) {
    const Keys keys(header, source);
    auto kind = keys.text("model", "");
    if (!kind) return kind.error();
    if (kind.value().empty()) return Error{ErrorCode::NotFound, source + ": the file carries no tokenizer (no tokenizer.ggml.model)"};
    if (kind.value() != "gpt2" && kind.value() != "llama")
        return keys.fail("model", "'" + kind.value() + "' is not read (gpt2 and llama are)", ErrorCode::Unsupported);
    Vocabulary v;
    auto tokens = keys.strings("tokens", true);
    if (!tokens) return tokens.error();
    v.tokens = std::move(tokens.value());
    if (v.tokens.empty()) return keys.fail("tokens", "must not be empty");
    auto types = keys.numbers("token_type", v.tokens.size());
    if (!types) return types.error();
    v.types = types.value().empty() ? std::vector<double>(v.tokens.size(), static_cast<double>(kNormal)) : types.value();
    Specials specials;
    auto bos = keys.id("bos_token_id"), eos = keys.id("eos_token_id");
    if (!bos) return bos.error();
    if (!eos) return eos.error();
    const auto count = static_cast<std::int64_t>(v.tokens.size());
    if (bos.value() >= count) return keys.fail("bos_token_id", "is past the " + std::to_string(count) + " tokens");
    if (eos.value() >= count) return keys.fail("eos_token_id", "is past the " + std::to_string(count) + " tokens");
    const bool spm = kind.value() == "llama";
    auto addBos = keys.flag("add_bos_token", spm), addEos = keys.flag("add_eos_token", false);
    if (!addBos) return addBos.error();
    if (!addEos) return addEos.error();
    specials = Specials{bos.value(), eos.value(), addBos.value(), addEos.value()};
    const std::string named = source + " (tokenizer.ggml.*)";
    if (spm) return spmTokenizer(keys, v, specials, named);
    Json root{{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", addedTokens(v)}};
    root["post_processor"] = postProcessor(v, specials.bos, specials.eos, specials.addBos, specials.addEos);
    auto json = bpeTokenizer(keys, v, root);
    if (!json) return json.error();
    return makeTokenizerFromJsonValue(json.value(), named);
}

}  // namespace attnscope::engine
