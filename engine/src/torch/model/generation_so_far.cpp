#include "torch/model/generation_so_far.h"

#include "base/api/engine_error.h"
#include "attention/variants/model_softmax/model_softmax_rule.h"
#include "attention/weights/dense_row_weights.h"
#include "attention/weights/softmax_row_weights.h"

#include <algorithm>
#include <utility>

namespace attnscope::engine {
namespace {

using Rows = std::vector<std::shared_ptr<const std::vector<float>>>;

// Rows [0, p) from the prompt's own weights, rows p + i from the decoder step's row i; a key after
// the query is outside the pattern (causal), as is one past the layer's window.
class GeneratedRowsWeights final : public DenseRowWeights {
public:
    GeneratedRowsWeights(std::shared_ptr<const AttentionWeights> prompt, Rows rows, std::int64_t window, ReasonBits reason)
        : DenseRowWeights(prompt->heads(), prompt->queries() + static_cast<std::int64_t>(rows.size()),
                          prompt->queries() + static_cast<std::int64_t>(rows.size())),
          m_prompt(std::move(prompt)), m_rows(std::move(rows)), m_window(window), m_reason(reason) {}

private:
    void fillTile(WeightTile& out) const override {
        const std::int64_t p = m_prompt->queries(), cols = out.cols();
        const bool reasons = !out.reasons.empty();
        if (out.r0 < p && out.c0 < p) {
            const WeightTile t = m_prompt->tile(out.head, out.r0, std::min(out.r1, p), out.c0, std::min(out.c1, p), reasons);
            for (std::int64_t i = 0; i < t.rows(); ++i)
                for (std::int64_t j = 0; j < t.cols(); ++j) {
                    const std::size_t from = static_cast<std::size_t>(i * t.cols() + j), to = static_cast<std::size_t>(i * cols + j);
                    out.weights[to] = t.weights[from];
                    if (reasons) {
                        out.reasons[to] = t.reasons[from];
                        out.multiplicity[to] = t.multiplicity[from];
                    }
                }
        }
        for (std::int64_t r = std::max(out.r0, p); r < out.r1; ++r) {
            const std::vector<float>& row = *m_rows[static_cast<std::size_t>(r - p)];
            const std::int64_t length = r + 1, first = m_window > 0 ? std::max<std::int64_t>(0, r - m_window + 1) : 0;
            for (std::int64_t c = std::max(out.c0, first); c < std::min(out.c1, length); ++c) {
                const std::size_t to = static_cast<std::size_t>((r - out.r0) * cols + (c - out.c0));
                out.weights[to] = row[static_cast<std::size_t>(out.head * length + c)];
                if (reasons) {
                    out.reasons[to] = m_reason;
                    out.multiplicity[to] = 1;
                }
            }
        }
    }

    std::shared_ptr<const AttentionWeights> m_prompt;
    Rows m_rows;
    std::int64_t m_window = 0;
    ReasonBits m_reason = 0;
};

}  // namespace

GenerationSoFar::GenerationSoFar(const ModelInfo& info, int layer, SharedFloats q, SharedFloats k, std::vector<Token> promptTokens)
    : m_tokens(std::move(promptTokens)) {
    m_own = info.layerAttention.at(static_cast<std::size_t>(layer));
    if (m_own.variant != "model_softmax")
        throw EngineError(ErrorCode::InvalidArgument, "layer " + std::to_string(layer) + "'s own attention (" + m_own.summary +
                                                          ") is not the softmax the decoder step computes");
    const std::int64_t heads = q.shape.at(0), p = q.shape.at(1), d = q.shape.at(2);
    const SoftmaxScoreRule rule = modelSoftmaxRule(m_own.params, heads, p, p, d, nullptr);
    m_promptLength = p;
    m_window = rule.window;
    m_reason = modelSoftmaxReason(rule);
    m_prompt = std::make_shared<SoftmaxRowWeights>(std::move(q), std::move(k), rule, std::vector<std::uint8_t>{},
                                                   std::vector<std::uint8_t>{}, m_reason);
    m_base.modelFolder = info.folder;
    m_base.modelLayer = layer;
    if (info.kvHeads > 0 && info.kvHeads < info.heads) m_base.modelKvHeads = info.kvHeads;
    if (static_cast<std::size_t>(layer) < info.layerWindows.size()) m_base.modelWindow = info.layerWindows[static_cast<std::size_t>(layer)];
    m_base.modelFamily = info.arch;
    m_base.modelFamilyName = info.familyName;
    m_base.modelWeightFormat = info.weightFormat;
    m_base.modelWeightTypes = info.weightTypes;
    m_base.ownAttentionSummary = m_own.summary;
    m_base.ownAttention = 0;
    m_base.heads = heads;
    m_base.headDim = d;
    m_base.input.kind = TokenizerKind::Model;
}

std::vector<float> GenerationSoFar::promptLastRow() const {
    const std::int64_t p = m_promptLength;
    std::vector<float> row;
    row.reserve(static_cast<std::size_t>(m_prompt->heads() * p));
    for (int h = 0; h < static_cast<int>(m_prompt->heads()); ++h) {
        const WeightTile t = m_prompt->tile(h, p - 1, p, 0, p);
        row.insert(row.end(), t.weights.begin(), t.weights.end());
    }
    return row;
}

void GenerationSoFar::addRow(std::vector<float> row, Token token) {
    m_rows.push_back(std::make_shared<const std::vector<float>>(std::move(row)));
    m_tokens.push_back(std::move(token));
}

std::shared_ptr<const RunResult> GenerationSoFar::snapshot() const {
    auto run = std::make_shared<RunResult>(m_base);
    const std::int64_t n = m_promptLength + static_cast<std::int64_t>(m_rows.size());
    run->n = n;
    run->input.tokens.assign(m_tokens.begin(), m_tokens.begin() + n);
    for (Token& t : run->input.tokens) {  // (the text of the run: the tokens' texts one after another)
        t.byteBegin = static_cast<std::int64_t>(run->input.text.size());
        run->input.text += t.text;
        t.byteEnd = static_cast<std::int64_t>(run->input.text.size());
    }
    AttentionResult own;
    own.variantId = m_own.variant;
    own.params = m_own.params;
    own.heads = m_base.heads;
    own.n = own.m = n;
    own.d = m_base.headDim;
    own.weights = std::make_shared<GeneratedRowsWeights>(m_prompt, m_rows, m_window, m_reason);
    run->results.push_back(std::move(own));
    run->warnings.push_back("generating: the rows written so far; the run on the finished sequence replaces them");
    return run;
}

}  // namespace attnscope::engine
