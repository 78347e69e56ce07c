// Searching the context index: cosine against every indexed token at one layer (one head's slice
// for keys and queries), the best first, each with its corpus context.

#include <attnscope/context_search.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope::engine {
namespace {

bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0u) == 0x80u; }

/// The floats [offset, offset + length) of each vector that a query compares.
struct Slice {
    std::int64_t offset = 0, length = 0;
};

Result<Slice> comparedSlice(const ContextIndex& index, const ContextQuery& query) {
    if (query.head && (*query.head < 0 || *query.head >= index.heads))
        return makeError(ErrorCode::InvalidArgument, "head " + std::to_string(*query.head) + " is out of range (the model has " +
                                                         std::to_string(index.heads) + ")");
    if (index.space == ContextSpace::Hidden || !query.head || index.headDim <= 0) return Slice{0, index.width};
    // Keys of a grouped-query model: query head h reads key head h / (heads / key heads).
    const std::int64_t vectorHeads = index.width / index.headDim;
    const std::int64_t group = std::max<std::int64_t>(index.heads / std::max<std::int64_t>(vectorHeads, 1), 1);
    const std::int64_t head = std::min(*query.head / group, vectorHeads - 1);
    return Slice{head * index.headDim, index.headDim};
}

double cosineOf(const float* a, const float* b, std::int64_t length, double aNorm) {
    double dot = 0.0, bSquared = 0.0;
    for (std::int64_t i = 0; i < length; ++i) {
        dot += static_cast<double>(a[i]) * b[i];
        bSquared += static_cast<double>(b[i]) * b[i];
    }
    if (bSquared <= 0.0) return -2.0;  // a zero vector matches nothing
    return dot / (aNorm * std::sqrt(bSquared));
}

/// The corpus around [begin, end): up to `bytes` on each side, within the token's line, cut at
/// character boundaries.
void cutContext(const std::string& corpus, std::int64_t begin, std::int64_t end, std::int64_t bytes, ContextMatch& match) {
    const auto lineStart = corpus.rfind('\n', begin > 0 ? static_cast<std::size_t>(begin - 1) : 0);
    std::int64_t from = std::max<std::int64_t>(begin - bytes, lineStart == std::string::npos || begin == 0 ? 0 : static_cast<std::int64_t>(lineStart) + 1);
    while (from < begin && isContinuationByte(corpus[static_cast<std::size_t>(from)])) ++from;
    const auto lineEnd = corpus.find('\n', static_cast<std::size_t>(end));
    std::int64_t to = std::min<std::int64_t>(end + bytes, lineEnd == std::string::npos ? static_cast<std::int64_t>(corpus.size())
                                                                                       : static_cast<std::int64_t>(lineEnd));
    while (to > end && to < static_cast<std::int64_t>(corpus.size()) && isContinuationByte(corpus[static_cast<std::size_t>(to)])) --to;
    match.before = corpus.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(begin - from));
    match.text = corpus.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
    match.after = corpus.substr(static_cast<std::size_t>(end), static_cast<std::size_t>(to - end));
}

}  // namespace

Result<std::vector<ContextMatch>> searchContext(const ContextIndex& index, const std::vector<float>& vector,
                                                const ContextQuery& query) {
    if (query.layer < 0 || query.layer >= index.layers)
        return makeError(ErrorCode::InvalidArgument, "layer " + std::to_string(query.layer) + " is out of range (the index has " +
                                                         std::to_string(index.layers) + ")");
    if (static_cast<std::int64_t>(vector.size()) != index.width)
        return makeError(ErrorCode::InvalidArgument, "the searched vector has " + std::to_string(vector.size()) +
                                                         " values; the index's " + contextSpaceName(index.space) + " have " +
                                                         std::to_string(index.width));
    auto slice = comparedSlice(index, query);
    if (!slice) return slice.error();
    const float* wanted = vector.data() + slice->offset;
    double wantedSquared = 0.0;
    for (std::int64_t i = 0; i < slice->length; ++i) wantedSquared += static_cast<double>(wanted[i]) * wanted[i];
    if (wantedSquared <= 0.0) return makeError(ErrorCode::InvalidArgument, "the searched vector is zero: no direction to compare");
    const double wantedNorm = std::sqrt(wantedSquared);

    const auto& vectors = index.vectors[static_cast<std::size_t>(query.layer)];
    std::vector<std::pair<double, std::int64_t>> scored;
    scored.reserve(index.tokens.size());
    for (std::int64_t t = 0; t < index.size(); ++t) {
        const ContextToken& token = index.tokens[static_cast<std::size_t>(t)];
        if (token.begin == token.end) continue;  // the model's special tokens are not corpus text
        const double cosine = cosineOf(wanted, vectors.data() + t * index.width + slice->offset, slice->length, wantedNorm);
        if (cosine > -2.0) scored.emplace_back(cosine, t);
    }
    const auto kept = std::min<std::size_t>(scored.size(), static_cast<std::size_t>(std::max<std::int64_t>(query.top, 0)));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(kept), scored.end(),
                      [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });

    const std::int64_t peekHead = query.head.value_or(0);
    std::vector<ContextMatch> matches;
    for (std::size_t i = 0; i < kept; ++i) {
        ContextMatch match;
        match.token = scored[i].second;
        match.cosine = scored[i].first;
        const ContextToken& token = index.tokens[static_cast<std::size_t>(match.token)];
        cutContext(index.corpus, token.begin, token.end, query.contextBytes, match);
        match.peek = index.peeks[static_cast<std::size_t>(query.layer)][static_cast<std::size_t>(match.token * index.heads + peekHead)];
        if (match.peek.key >= 0 && match.peek.key < index.size()) match.peekText = index.tokens[static_cast<std::size_t>(match.peek.key)].text;
        matches.push_back(std::move(match));
    }
    return matches;
}

}  // namespace attnscope::engine
