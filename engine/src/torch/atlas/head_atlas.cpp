#include "torch/tensors/tensor_views.h"
#include "torch/atlas/head_atlas.h"

#include "attention/run/request_checks.h"
#include "base/runtime/run_context.h"
#include "attention/catalog/result_weights.h"
#include "base/api/attention_flow.h"

#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr double kWindowTarget = 0.9;
constexpr double kSpectrumTarget = 0.9;
constexpr std::int64_t kMaxStride = 64;

/// Mean share of each head's softmax mass inside the variant's pattern. A key listed twice
/// (BigBird counting duplicates) is counted once: the question is which keys are reachable.
std::vector<double> keptMassPerHead(const AttentionResult& r, const at::Tensor& probs) {
    const std::int64_t heads = probs.size(0), n = probs.size(1), m = probs.size(2);
    std::vector<double> kept(static_cast<std::size_t>(heads), 0.0);
    at::Tensor p = probs.contiguous();
    const float* data = p.data_ptr<float>();
    for (std::int64_t h = 0; h < heads; ++h) {
        double total = 0;
        r.weights->forEachRow(static_cast<int>(h), 0, n, [&](const RowEntries& row) {
            for (std::int64_t t = 0; t < row.count; ++t)
                if (row.keys[t] < m) total += data[(h * n + row.query) * m + row.keys[t]];
            return true;
        });
        kept[static_cast<std::size_t>(h)] = total / static_cast<double>(n);
    }
    return kept;
}

/// Mass per |i - j| distance, averaged over queries: [heads, n].
at::Tensor distanceHistogram(const at::Tensor& probs) {
    const std::int64_t heads = probs.size(0), n = probs.size(1);
    at::Tensor idx = at::arange(n, at::kLong);
    at::Tensor dist = (idx.unsqueeze(1) - idx.unsqueeze(0)).abs().reshape({1, n * n}).expand({heads, n * n});
    at::Tensor hist = at::zeros({heads, n}, at::kFloat);
    hist.scatter_add_(1, dist, probs.reshape({heads, n * n}));
    return hist / static_cast<double>(n);
}

// StreamingLLM's cache: the first `sinks` keys and those within `window` of the query.
void fillStreaming(const at::Tensor& probs, std::int64_t sinks, std::int64_t window, std::vector<HeadMetrics>& out) {
    const std::int64_t n = probs.size(1);
    const at::Tensor idx = at::arange(n, at::kLong);
    const at::Tensor near = (idx.unsqueeze(1) - idx.unsqueeze(0)).abs() < window;
    const at::Tensor kept = near.logical_or(idx.unsqueeze(0) < sinks);
    const at::Tensor streaming = (probs * kept).sum(-1).mean(-1), recent = (probs * near).sum(-1).mean(-1);
    for (std::size_t h = 0; h < out.size(); ++h) {
        out[h].streamingKept = streaming[static_cast<std::int64_t>(h)].item<double>();
        out[h].windowOnlyKept = recent[static_cast<std::int64_t>(h)].item<double>();
    }
}

// Query heads sharing a key/value head (consecutive, as HF's repeat_kv): how alike their rows are.
void fillGroupSimilarity(const at::Tensor& probs, std::int64_t kvHeads, std::vector<HeadMetrics>& out) {
    const std::int64_t heads = probs.size(0);
    if (kvHeads <= 0 || kvHeads >= heads || heads % kvHeads != 0) return;
    const std::int64_t group = heads / kvHeads;
    const at::Tensor rows = probs.to(at::kDouble);
    const at::Tensor unit = rows / rows.norm(2, -1, true).clamp_min(1e-300);
    for (std::int64_t h = 0; h < heads; ++h) {
        double total = 0;
        for (std::int64_t other = h / group * group; other < (h / group + 1) * group; ++other)
            if (other != h) total += (unit[h] * unit[other]).sum(-1).mean().item<double>();
        out[static_cast<std::size_t>(h)].groupSimilarity = total / static_cast<double>(group - 1);
    }
}

void fillPositional(const at::Tensor& probs, const std::vector<bool>& special, std::vector<HeadMetrics>& out) {
    const std::int64_t heads = probs.size(0), n = probs.size(1);
    at::Tensor entropy = -(probs * probs.clamp_min(1e-30).log()).sum(-1).mean(-1);
    at::Tensor idx = at::arange(n, at::kFloat);
    at::Tensor dist = (idx.unsqueeze(1) - idx.unsqueeze(0)).abs();
    at::Tensor distance = (probs * dist).sum(-1).mean(-1);
    at::Tensor diag = probs.diagonal(0, 1, 2).mean(-1);
    at::Tensor previous = n > 1 ? probs.diagonal(-1, 1, 2).mean(-1) : at::zeros({heads});
    at::Tensor next = n > 1 ? probs.diagonal(1, 1, 2).mean(-1) : at::zeros({heads});
    at::Tensor first = probs.select(2, 0).mean(-1);
    at::Tensor sink = (1 - probs.to(at::kDouble).sum(-1)).clamp_min(0).mean(-1);  // (rounding leaves ~1e-7)
    std::vector<std::int64_t> specialIdx;
    for (std::size_t i = 0; i < special.size(); ++i)
        if (special[i]) specialIdx.push_back(static_cast<std::int64_t>(i));
    at::Tensor specialShare = specialIdx.empty()
                                  ? at::zeros({heads})
                                  : probs.index_select(2, at::tensor(at::ArrayRef<std::int64_t>(specialIdx), at::kLong))
                                        .sum(-1)
                                        .mean(-1);
    // Squared singular values of P are the eigenvalues of P P^T (symmetric: cheaper than an SVD).
    at::Tensor energy = at::linalg_eigvalsh(at::bmm(probs, probs.transpose(1, 2)).to(at::kDouble)).flip({-1}).clamp_min(0);
    at::Tensor cumulative = energy.cumsum(-1) / energy.sum(-1, true).clamp_min(1e-300);
    at::Tensor hist = distanceHistogram(probs);
    at::Tensor windowKept = hist.cumsum(-1);
    for (std::int64_t h = 0; h < heads; ++h) {
        HeadMetrics& m = out[static_cast<std::size_t>(h)];
        m.entropy = entropy[h].item<double>();
        m.meanDistance = distance[h].item<double>();
        m.selfShare = diag[h].item<double>();
        m.previousShare = previous[h].item<double>();
        m.nextShare = next[h].item<double>();
        m.firstShare = first[h].item<double>();
        m.sinkShare = sink[h].item<double>();
        m.specialShare = specialShare[h].item<double>();
        m.rank90 = (cumulative[h] < kSpectrumTarget - 1e-12).sum().item<std::int64_t>() + 1;
        m.rank90 = std::min(m.rank90, n);
        const at::Tensor keptRow = windowKept[h].contiguous();
        auto kept = keptRow.accessor<float, 1>();
        m.bestWindow = n - 1;
        for (std::int64_t w = 0; w < n; ++w) {
            if (kept[w] >= kWindowTarget) {
                m.bestWindow = w;
                break;
            }
        }
        m.bestWindowKept = kept[m.bestWindow];
        const at::Tensor histRow = hist[h].contiguous();
        auto histogram = histRow.accessor<float, 1>();
        double bestLift = -1;
        for (std::int64_t l = 2; l <= std::min(kMaxStride, n / 2); ++l) {
            double mass = 0;
            for (std::int64_t d = l; d < n; d += l) mass += histogram[d];
            const double lift = mass * static_cast<double>(l);
            if (lift > bestLift + 1e-12) {
                bestLift = lift;
                m.bestStride = l;
                m.bestStrideKept = mass;
            }
        }
    }
}

/// Ã_l = ½ head-mean + ½ I, rows re-normalised: residual connections keep half the flow on the
/// token itself (Abnar & Zuidema 2020). Shared by rollout and flow.
std::vector<at::Tensor> residualAttention(const std::vector<at::Tensor>& attention) {
    const std::int64_t n = attention.front().size(1);
    const at::Tensor eye = at::eye(n, at::kDouble);
    std::vector<at::Tensor> out;
    for (const auto& probs : attention) {
        at::Tensor a = 0.5 * probs.to(at::kDouble).mean(0) + 0.5 * eye;
        out.push_back(a / a.sum(-1, true));
    }
    return out;
}

at::Tensor attentionRollout(const std::vector<at::Tensor>& residual) {
    at::Tensor rollout = at::eye(residual.front().size(0), at::kDouble);
    for (const auto& a : residual) rollout = at::mm(a, rollout);
    return rollout.to(at::kFloat);
}

}  // namespace

void computeHeadAtlas(const ModelSession::Pass& pass, const std::vector<ResolvedSetting>& settings, bool rollout,
                      BufferPool& pool, const ProgressFn& progress, HeadAtlas& atlas) {
    const ModelCapture& capture = pass.capture;
    const std::int64_t layers = static_cast<std::int64_t>(capture.attention.size());
    const std::int64_t heads = capture.attention.front().size(0);
    atlas.layers = layers;
    atlas.heads = heads;
    atlas.n = capture.attention.front().size(1);
    atlas.streamingWindow = std::max<std::int64_t>(1, (atlas.n + 3) / 4);
    // Captured attention without q, k, v: the weights' own metrics only; coverage runs variants
    atlas.settingNotes.assign(settings.size(), capture.q.empty() ? std::string("it runs on q, k and v, which the file does not hold")
                                                                  : std::string());
    atlas.metrics.assign(static_cast<std::size_t>(layers * heads), HeadMetrics{});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::int64_t steps = layers * static_cast<std::int64_t>(settings.size() + 1);
    std::int64_t step = 0;
    auto tick = [&]() {
        if (progress && !progress(Progress{"atlas", step, steps})) throw CancelledError();
        ++step;
    };

    for (std::int64_t l = 0; l < layers; ++l) {
        tick();
        const at::Tensor& probs = capture.attention[static_cast<std::size_t>(l)];
        std::vector<HeadMetrics> layerMetrics(static_cast<std::size_t>(heads));
        for (std::int64_t h = 0; h < heads; ++h) {
            layerMetrics[static_cast<std::size_t>(h)].layer = static_cast<int>(l);
            layerMetrics[static_cast<std::size_t>(h)].head = static_cast<int>(h);
            layerMetrics[static_cast<std::size_t>(h)].keptMass.assign(settings.size(), nan);
            layerMetrics[static_cast<std::size_t>(h)].outputError.assign(settings.size(), nan);
        }
        fillPositional(probs, pass.special, layerMetrics);
        fillStreaming(probs, atlas.streamingSinks, atlas.streamingWindow, layerMetrics);
        fillGroupSimilarity(probs, atlas.model.kvHeads, layerMetrics);
        if (capture.q.empty()) {
            for (std::int64_t h = 0; h < heads; ++h)
                atlas.metrics[static_cast<std::size_t>(l * heads + h)] = std::move(layerMetrics[static_cast<std::size_t>(h)]);
            continue;
        }

        const auto layer = static_cast<std::size_t>(l);
        const Qkv qkv = qkvOf(capture.q[layer], capture.k[layer], capture.v[layer]);
        const at::Tensor exact = at::bmm(probs, capture.v[layer]);  // the head's own output
        const at::Tensor exactNorm = exact.reshape({heads, -1}).norm(2, 1);
        for (std::size_t s = 0; s < settings.size(); ++s) {
            tick();
            if (!atlas.settingNotes[s].empty()) continue;  // failed on an earlier layer: same n, same reason
            // RunContext keeps a reference to its progress function: it must outlive ctx.
            static const ProgressFn kNoProgress;
            RunContext ctx(pool, kNoProgress);
            ctx.seed = 0;
            AttentionResult r;
            try {
                r = settings[s].variant->run(qkv, settings[s].params, ctx);
            } catch (const EngineError& e) {
                atlas.settingNotes[s] = e.what();
                continue;
            }
            if (auto attached = attachWeights(r, qkv.q, qkv.k, qkv.keyPadding); !attached)
                throw EngineError(ErrorCode::Internal, attached.error().message);
            const std::vector<double> kept = keptMassPerHead(r, probs);
            at::Tensor output = at::from_blob(const_cast<float*>(r.output.data()), {heads, atlas.n, qkv.d()}, at::kFloat);
            at::Tensor error = (output - exact).reshape({heads, -1}).norm(2, 1) / exactNorm.clamp_min(1e-30);
            for (std::int64_t h = 0; h < heads; ++h) {
                layerMetrics[static_cast<std::size_t>(h)].keptMass[s] = kept[static_cast<std::size_t>(h)];
                layerMetrics[static_cast<std::size_t>(h)].outputError[s] = error[h].item<double>();
            }
        }
        for (std::int64_t h = 0; h < heads; ++h)
            atlas.metrics[static_cast<std::size_t>(l * heads + h)] = std::move(layerMetrics[static_cast<std::size_t>(h)]);
    }
    if (rollout) {
        const std::vector<at::Tensor> residual = residualAttention(capture.attention);
        at::Tensor r = attentionRollout(residual);
        atlas.rollout = PlainTensor::fromF32({atlas.n, atlas.n},
                                             std::vector<float>(r.data_ptr<float>(), r.data_ptr<float>() + r.numel()));
        if (atlas.n <= kMaxFlowTokens) {
            std::vector<std::vector<double>> layersAsRows;
            for (const auto& a : residual) {
                const at::Tensor c = a.contiguous();
                layersAsRows.emplace_back(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
            }
            const std::vector<double> flow = attentionFlow(layersAsRows, atlas.n);
            atlas.flow = PlainTensor::fromF32({atlas.n, atlas.n}, std::vector<float>(flow.begin(), flow.end()));
        } else {
            atlas.notices.push_back("attention flow not computed: " + std::to_string(atlas.n) + " tokens (it needs n^2 "
                                    "max-flow problems; up to " + std::to_string(kMaxFlowTokens) + " tokens)");
        }
    }
}

}  // namespace attnscope::engine
