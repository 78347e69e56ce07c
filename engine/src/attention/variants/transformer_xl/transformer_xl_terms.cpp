// Transformer-XL's four score terms per tile (attnscope/score_terms.h), computed in double from the
// run's Q, K and the result's u, v, r so that the view's four panels add up to the score.

#include "attention/variants/transformer_xl/transformer_xl_geometry.h"
#include "attention/weights/kept_state.h"

#include <attnscope/score_terms.h>

#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

using namespace transformer_xl;

double dot(const float* a, const float* b, std::int64_t d) {
    double total = 0;
    for (std::int64_t c = 0; c < d; ++c) total += static_cast<double>(a[c]) * b[c];
    return total;
}

ScoreTerms computeTerms(const KeptState& state, int head, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                        std::int64_t c1) {
    const Settings x = settingsOf(state.params);
    const Parameters p = keptParameters(state, x);
    const std::int64_t d = state.d, n = state.n;
    const float* q = state.q.data.get() + head * n * d;
    const float* k = state.k.data.get() + head * n * d;
    const float* u = p.wBias.f32.data() + head * d;
    const float* v = p.rBias.f32.data() + head * d;
    const float* pos = p.posKeys.f32.data() + head * distances(x) * d;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    ScoreTerms t;
    t.head = head;
    t.r0 = r0, t.r1 = r1, t.c0 = c0, t.c1 = c1;
    const auto cells = static_cast<std::size_t>(t.rows() * t.cols());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (auto* term : {&t.content, &t.contentPosition, &t.globalContent, &t.globalPosition}) term->assign(cells, nan);
    for (std::int64_t i = r0; i < r1; ++i) {
        for (std::int64_t j = std::max(c0, firstKey(x, i)); j < std::min(c1, i + 1); ++j) {
            const auto cell = static_cast<std::size_t>((i - r0) * t.cols() + (j - c0));
            const float* kj = k + j * d;
            const float* r = pos + (i - j) * d;
            t.content[cell] = static_cast<float>(dot(q + i * d, kj, d) * scale);
            t.contentPosition[cell] = x.relative ? static_cast<float>(dot(q + i * d, r, d) * scale) : 0.0f;
            t.globalContent[cell] = x.relative ? static_cast<float>(dot(u, kj, d) * scale) : 0.0f;
            t.globalPosition[cell] = x.relative ? static_cast<float>(dot(v, r, d) * scale) : 0.0f;
        }
    }
    return t;
}

}  // namespace

std::int64_t SegmentLayout::firstKey(std::int64_t i) const {
    Settings s;
    s.segment = segment;
    s.memory = memory;
    s.sameLength = sameLength;
    return transformer_xl::firstKey(s, i);
}

std::optional<SegmentLayout> readSegmentLayout(const AttentionResult& result) {
    if (result.variantId != "transformer_xl") return std::nullopt;
    try {
        const Settings s = settingsOf(result.params);
        SegmentLayout layout;
        layout.n = result.n;
        layout.segment = s.segment;
        layout.memory = s.memory;
        layout.relative = s.relative;
        layout.sameLength = s.sameLength;
        return layout;
    } catch (const std::exception&) {
        return std::nullopt;  // (parameters missing or out of range: not a result it can draw)
    }
}

Result<ScoreTerms> transformerXlScoreTerms(const RunResult& run, std::size_t index, int head, std::int64_t r0,
                                           std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    if (index >= run.results.size() || run.results[index].variantId != "transformer_xl")
        return makeError(ErrorCode::InvalidArgument, "score terms: result " + std::to_string(index) + " is not a transformer_xl result");
    const AttentionResult& r = run.results[index];
    if (head < 0 || head >= r.heads || r0 < 0 || r0 > r1 || r1 > r.n || c0 < 0 || c0 > c1 || c1 > r.m)
        return makeError(ErrorCode::InvalidArgument, "score terms: head or rectangle outside the result");
    if ((r1 - r0) * (c1 - c0) > (std::int64_t{1} << 22))
        return makeError(ErrorCode::InvalidArgument, "score terms: at most 4,194,304 cells per call");
    if (run.q.empty() || run.k.empty()) return makeError(ErrorCode::InvalidInput, "score terms: the run kept no Q and K");
    KeptState state;
    state.variantId = r.variantId;
    state.params = r.params;
    state.heads = r.heads, state.n = r.n, state.m = r.m, state.d = r.d;
    state.q = run.q;
    state.k = run.k;
    state.stats = &r.stats;
    state.diagnostics = &r.diagnostics;
    try {
        return computeTerms(state, head, r0, r1, c0, c1);
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    }
}

}  // namespace attnscope::engine
