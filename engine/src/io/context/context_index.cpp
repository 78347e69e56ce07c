// Building the context index: the corpus through the model piece by piece, each token's vectors
// and per-head strongest key kept (attnscope/context_search.h).

#include <attnscope/context_search.h>
#include <attnscope/memory_budget.h>

#include "io/checkpoint/safetensors_json.h"
#include "io/context/context_pieces.h"

#include <algorithm>
#include <string>
#include <utility>

namespace attnscope::engine {
namespace {

/// The widths a pass gives each token's vector in `space` at `layer`.
Result<std::int64_t> vectorWidth(const ModelForward& pass, ContextSpace space, std::int64_t layer) {
    if (space == ContextSpace::Hidden) {
        if (static_cast<std::int64_t>(pass.hidden.size()) <= layer + 1 || pass.hidden[static_cast<std::size_t>(layer + 1)].shape.size() != 2)
            return makeError(ErrorCode::Unsupported, "this model's pass keeps no hidden states: search its keys or queries instead");
        return pass.hidden[static_cast<std::size_t>(layer + 1)].shape[1];
    }
    if (static_cast<std::int64_t>(pass.qkv.size()) <= layer)
        return makeError(ErrorCode::Unsupported, "this model's pass keeps no keys or queries at layer " + std::to_string(layer));
    const PlainTensor& t = space == ContextSpace::Keys ? pass.qkv[static_cast<std::size_t>(layer)].k : pass.qkv[static_cast<std::size_t>(layer)].q;
    if (t.shape.size() != 3) return makeError(ErrorCode::Internal, "a layer's keys or queries are not [heads, n, d]");
    return t.shape[0] * t.shape[2];
}

/// Appends token `token`'s vector (vectorWidth floats) to `out`.
void appendVector(const ModelForward& pass, ContextSpace space, std::int64_t layer, std::int64_t token,
                  std::vector<float>& out) {
    if (space == ContextSpace::Hidden) {
        const PlainTensor& h = pass.hidden[static_cast<std::size_t>(layer + 1)];
        const std::int64_t width = h.shape[1];
        const float* row = h.f32.data() + token * width;
        out.insert(out.end(), row, row + width);
        return;
    }
    const PlainTensor& t = space == ContextSpace::Keys ? pass.qkv[static_cast<std::size_t>(layer)].k : pass.qkv[static_cast<std::size_t>(layer)].q;
    const std::int64_t heads = t.shape[0], n = t.shape[1], d = t.shape[2];
    for (std::int64_t h = 0; h < heads; ++h) {
        const float* row = t.f32.data() + (h * n + token) * d;
        out.insert(out.end(), row, row + d);
    }
}

/// Appends, for every token of the pass, each head's strongest key at `layer` (shifted by
/// `firstToken`, the pass's first token in the index), or -1 keys when the pass kept no attention.
void appendPeeks(const ModelForward& pass, std::int64_t layer, std::int64_t heads, std::int64_t firstToken,
                 std::int64_t tokens, std::vector<ContextPeek>& out) {
    const PlainTensor* weights = static_cast<std::int64_t>(pass.attention.size()) > layer ? &pass.attention[static_cast<std::size_t>(layer)] : nullptr;
    const bool kept = weights && weights->shape.size() == 3 && weights->shape[0] == heads && weights->shape[1] >= tokens &&
                      weights->shape[2] >= tokens;
    for (std::int64_t t = 0; t < tokens; ++t) {
        for (std::int64_t h = 0; h < heads; ++h) {
            ContextPeek peek;
            if (kept) {
                const std::int64_t keys = weights->shape[2];
                const float* row = weights->f32.data() + (h * weights->shape[1] + t) * keys;
                const auto strongest = std::max_element(row, row + keys) - row;
                peek.key = static_cast<std::int32_t>(firstToken + strongest);
                peek.weight = row[strongest];
            }
            out.push_back(peek);
        }
    }
}

/// Bytes one token takes in the index.
std::uint64_t bytesPerToken(const ContextIndex& index) {
    return static_cast<std::uint64_t>(index.layers) *
               (static_cast<std::uint64_t>(index.width) * sizeof(float) + static_cast<std::uint64_t>(index.heads) * sizeof(ContextPeek)) +
           sizeof(ContextToken) + 8;
}

/// Sets the index's shape from its first pass.
Result<void> takeShape(ContextIndex& index, const ModelForward& pass) {
    index.layers = pass.layers;
    index.heads = pass.heads;
    index.headDim = pass.headDim;
    if (index.layers <= 0 || index.heads <= 0) return makeError(ErrorCode::InvalidArgument, "the model has no attention layers to index");
    auto width = vectorWidth(pass, index.space, 0);
    if (!width) return width.error();
    index.width = *width;
    index.vectors.assign(static_cast<std::size_t>(index.layers), {});
    index.peeks.assign(static_cast<std::size_t>(index.layers), {});
    return {};
}

/// Adds one piece's pass to the index.
Result<void> addPass(ContextIndex& index, const ModelForward& pass, std::int64_t pieceBegin) {
    const auto tokens = static_cast<std::int64_t>(pass.input.tokens.size());
    if (tokens != pass.n) return makeError(ErrorCode::Internal, "a pass's tokens and its length differ");
    const std::int64_t first = index.size();
    for (std::int64_t layer = 0; layer < index.layers; ++layer) {
        auto width = vectorWidth(pass, index.space, layer);
        if (!width) return width.error();
        if (*width != index.width) return makeError(ErrorCode::Internal, "the model's layers differ in width");
        auto& vectors = index.vectors[static_cast<std::size_t>(layer)];
        for (std::int64_t t = 0; t < tokens; ++t) appendVector(pass, index.space, layer, t, vectors);
        appendPeeks(pass, layer, index.heads, first, tokens, index.peeks[static_cast<std::size_t>(layer)]);
    }
    for (const Token& token : pass.input.tokens) {
        ContextToken kept;
        kept.text = token.text;
        kept.begin = pieceBegin + token.byteBegin;
        kept.end = pieceBegin + token.byteEnd;
        index.tokens.push_back(std::move(kept));
    }
    return {};
}

}  // namespace

const char* contextSpaceName(ContextSpace space) {
    switch (space) {
    case ContextSpace::Hidden: return "hidden";
    case ContextSpace::Keys: return "keys";
    case ContextSpace::Queries: return "queries";
    }
    return "hidden";
}

std::optional<ContextSpace> parseContextSpace(const std::string& name) {
    for (const ContextSpace space : {ContextSpace::Hidden, ContextSpace::Keys, ContextSpace::Queries})
        if (name == contextSpaceName(space)) return space;
    return std::nullopt;
}

std::uint64_t ContextIndex::bytes() const {
    std::uint64_t total = corpus.size();
    for (const auto& layer : vectors) total += layer.size() * sizeof(float);
    for (const auto& layer : peeks) total += layer.size() * sizeof(ContextPeek);
    for (const auto& token : tokens) total += sizeof(ContextToken) + token.text.size();
    return total;
}

std::string contextModelIdentity(const ModelInfo& model) {
    return model.folder + "|" + model.arch + "|" + std::to_string(model.weightBytes) + "|" + std::to_string(model.layers);
}

std::uint64_t contextCorpusHash(const std::string& corpus) {
    std::uint64_t hash = 1469598103934665603ull;
    for (const char c : corpus) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash;
}

Result<std::shared_ptr<const ContextIndex>> buildContextIndex(const std::string& corpus, const ModelInfo& model,
                                                              const ContextIndexOptions& options,
                                                              const ContextForwardFn& forward, const ProgressFn& progress) {
    if (!safetensors_detail::isValidUtf8(corpus)) return makeError(ErrorCode::InvalidInput, "the corpus is not valid UTF-8 text");
    const auto pieces = context::corpusPieces(corpus, context::pieceBytesFor(model.maxTokens));
    if (pieces.empty()) return makeError(ErrorCode::InvalidArgument, "the corpus has no text to index");
    auto index = std::make_shared<ContextIndex>();
    index->modelIdentity = options.identity.empty() ? contextModelIdentity(model) : options.identity;
    index->corpusHash = contextCorpusHash(corpus);
    index->corpus = corpus;
    index->space = options.space;
    const auto total = static_cast<std::int64_t>(corpus.size());
    std::uint64_t used = corpus.size();
    for (std::size_t p = 0; p < pieces.size(); ++p) {
        if (progress && !progress({"context", pieces[p].begin, total}))
            return makeError(ErrorCode::Cancelled, "indexing the corpus was cancelled");
        ModelInput input;
        input.text = corpus.substr(static_cast<std::size_t>(pieces[p].begin), static_cast<std::size_t>(pieces[p].end - pieces[p].begin));
        input.keepAttention = true;
        auto pass = forward(input);
        if (!pass) return pass.error();
        if (p == 0) {
            auto shaped = takeShape(*index, **pass);
            if (!shaped) return shaped.error();
        }
        used += bytesPerToken(*index) * (*pass)->input.tokens.size();
        if (used > options.memoryBudgetBytes) {
            if (p == 0)
                return makeError(ErrorCode::OutOfBudget, "one line of the corpus alone needs more than the index's memory budget of " +
                                                             formatBytes(options.memoryBudgetBytes));
            index->notices.push_back("the index stopped at byte " + std::to_string(pieces[p].begin) + " of " + std::to_string(total) +
                                     ": its memory budget of " + formatBytes(options.memoryBudgetBytes) + " is full");
            break;
        }
        auto added = addPass(*index, **pass, pieces[p].begin);
        if (!added) return added.error();
        index->indexedBytes = pieces[p].end;
    }
    if (progress) progress({"context", total, total});
    return std::shared_ptr<const ContextIndex>(std::move(index));
}

Result<std::vector<float>> contextVector(const ModelForward& pass, ContextSpace space, std::int64_t layer, std::int64_t token) {
    if (layer < 0 || layer >= pass.layers)
        return makeError(ErrorCode::InvalidArgument, "layer " + std::to_string(layer) + " is out of range (the model has " +
                                                         std::to_string(pass.layers) + ")");
    if (token < 0 || token >= pass.n)
        return makeError(ErrorCode::InvalidArgument, "token " + std::to_string(token) + " is out of range (the text has " +
                                                         std::to_string(pass.n) + ")");
    auto width = vectorWidth(pass, space, layer);
    if (!width) return width.error();
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(*width));
    appendVector(pass, space, layer, token, out);
    return out;
}

}  // namespace attnscope::engine
