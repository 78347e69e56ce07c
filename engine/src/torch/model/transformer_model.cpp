#include "torch/model/transformer_model.h"

#include "io/families/family.h"
#include "torch/model/family_forward.h"

#include "base/runtime/run_context.h"
#include "torch/tensors/to_plain.h"

#include <algorithm>
#include <cmath>

namespace attnscope::engine {
void checkModelProgress(const ProgressFn& progress, std::int64_t done, std::int64_t total) {
    if (progress && !progress(Progress{"model", done, total})) throw CancelledError();
}

TransformerModel::TransformerModel(std::unique_ptr<ModelCheckpoint> checkpoint) : m_checkpoint(std::move(checkpoint)) {}

const at::Tensor& TransformerModel::weight(const std::string& name) {
    auto it = m_weights.find(name);
    if (it != m_weights.end()) return it->second;
    const std::vector<std::int64_t> shape = m_checkpoint->shapeOf(name);
    std::int64_t numel = 1;
    for (auto d : shape) numel *= d;
    // A released layer's buffer of the same size is written over: its pages are already
    // touched, where a fresh allocation would fault every page in again (layers share shapes).
    at::Tensor t;
    if (auto spare = m_spare.find(numel); spare != m_spare.end()) {
        t = spare->second.view(shape);
        m_spare.erase(spare);
    } else {
        t = at::empty(shape, at::kFloat);
    }
    auto finite = m_checkpoint->readF32Into(name, t.data_ptr<float>(), static_cast<std::size_t>(numel));
    if (!finite) throw EngineError(finite.error().code, finite.error().message);
    if (!finite.value()) noteWeight("weight '" + m_checkpoint->prefix() + name + "' contains NaN or Inf values");
    return m_weights.emplace(name, std::move(t)).first->second;
}

at::Tensor& TransformerModel::sliceBuffer(int slot, const std::vector<std::int64_t>& shape) {
    at::Tensor& buffer = m_slices[slot];
    std::int64_t numel = 1;
    for (auto d : shape) numel *= d;
    if (!buffer.defined() || buffer.numel() != numel) buffer = at::empty(shape, at::kFloat);
    buffer = buffer.view(shape);
    return buffer;
}

const at::Tensor& TransformerModel::expertSlice(const std::string& name, std::int64_t index, int slot) {
    const std::vector<std::int64_t> full = m_checkpoint->shapeOf(name);
    at::Tensor& buffer = sliceBuffer(slot, std::vector<std::int64_t>(full.begin() + 1, full.end()));
    auto finite = m_checkpoint->readSliceF32Into(name, index, buffer.data_ptr<float>(), static_cast<std::size_t>(buffer.numel()));
    if (!finite) throw EngineError(finite.error().code, finite.error().message);
    if (!finite.value()) noteWeight("weight '" + m_checkpoint->prefix() + name + "' contains NaN or Inf values");
    return buffer;
}

const at::Tensor& TransformerModel::mxfp4Slice(const std::string& base, std::int64_t index, int slot) {
    const std::vector<std::int64_t> blocks = m_checkpoint->shapeOf(base + "_blocks");  // [E, rows, groups, 16]
    at::Tensor& buffer = sliceBuffer(slot, {blocks[1], blocks[2] * 32});
    auto read = m_checkpoint->readMxfp4SliceInto(base, index, buffer.data_ptr<float>(), static_cast<std::size_t>(buffer.numel()));
    if (!read) throw EngineError(read.error().code, read.error().message);
    return buffer;
}

at::Tensor TransformerModel::embeddingRows(const std::string& name, const at::Tensor& ids) {
    const at::Tensor contiguous = ids.contiguous();
    const std::vector<std::int64_t> rows(contiguous.data_ptr<std::int64_t>(), contiguous.data_ptr<std::int64_t>() + contiguous.numel());
    auto plain = m_checkpoint->readRowsF32(name, rows);
    if (!plain) throw EngineError(plain.error().code, plain.error().message);
    auto holder = std::make_shared<PlainTensor>(std::move(plain.value()));
    at::Tensor t = at::from_blob(holder->f32.data(), holder->shape, [holder](void*) {}, at::kFloat);
    if (!at::isfinite(t).all().item<bool>())
        noteWeight("weight '" + m_checkpoint->prefix() + name + "' contains NaN or Inf values in the rows of this text");
    return t;
}

void TransformerModel::noteWeight(const std::string& notice) {
    // a released layer is read again on the next pass: its finding is said once
    if (std::find(m_weightNotices.begin(), m_weightNotices.end(), notice) == m_weightNotices.end())
        m_weightNotices.push_back(notice);
}

void TransformerModel::releaseWeights(const std::string& prefix) {
    for (auto it = m_weights.begin(); it != m_weights.end();) {
        if (it->first.compare(0, prefix.size(), prefix) != 0) {
            ++it;
            continue;
        }
        m_spare.emplace(it->second.numel(), it->second.reshape({-1}));
        it = m_weights.erase(it);
    }
    // the file's pages of the layer too (its experts may have been read a slice at a time)
    m_checkpoint->dropMappedPages(prefix);
}

at::Tensor TransformerModel::activation(const at::Tensor& x) const {
    switch (config().activation) {
    case Activation::GeluErf: return at::gelu(x);
    case Activation::GeluTanh: return at::gelu(x, "tanh");
    case Activation::Relu: return at::relu(x);
    case Activation::Silu: return at::silu(x);
    }
    return x;
}

at::Tensor TransformerModel::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                                    bool keepAttention, ModelCapture& capture) {
    const std::int64_t n = q.size(0), heads = config().numHeads, dh = config().headDim();
    auto split = [&](const at::Tensor& x) { return x.reshape({n, heads, dh}).transpose(0, 1).contiguous(); };
    at::Tensor qh = split(q), kh = split(k), vh = split(v);
    if (m_attentionHook) {
        at::Tensor weights;
        at::Tensor context = m_attentionHook(qh, kh, vh, keepAttention, weights);
        capture.q.push_back(qh);
        capture.k.push_back(kh);
        capture.v.push_back(vh);
        if (keepAttention) capture.attention.push_back(weights);
        return context.transpose(0, 1).reshape({n, heads * dh});
    }
    at::Tensor scores = at::bmm(qh, kh.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(dh)));
    if (causal) {
        at::Tensor future = at::ones({n, n}, at::kBool).triu_(1);
        scores.masked_fill_(future, -std::numeric_limits<float>::infinity());
    }
    at::Tensor probs = at::softmax(scores, -1);
    at::Tensor context = at::bmm(probs, vh);  // [heads, n, dh]
    capture.q.push_back(qh);
    capture.k.push_back(kh);
    capture.v.push_back(vh);
    if (keepAttention) capture.attention.push_back(probs);
    return context.transpose(0, 1).reshape({n, heads * dh});
}

RouterOptions switchRouterOptions(const SwitchSettings& moe) {
    RouterOptions options;
    options.policy = moe.topK > 1 ? kTopkPolicy : kSwitchPolicy;
    options.k = moe.topK;
    options.normalize = moe.normalizeTopK;
    options.capacityFactor = moe.capacityFactor;
    options.expertCapacity = moe.expertCapacity;
    options.scoring = moe.scoring;
    options.expertGroups = moe.expertGroups;
    options.keptGroups = moe.keptGroups;
    options.groupScore = moe.groupScore;
    options.gateScale = moe.gateScale;
    return options;
}

at::Tensor TransformerModel::switchFeedForward(const at::Tensor& x, const std::string& p, const SwitchExpertLayout& layout,
                                               ModelCapture& capture) {
    // x [n, h] -> logits [n, E] -> one expert, gate and slot per token -> out [n, h]
    const at::Tensor logits = (layout.routerBias ? at::linear(x, weight(switchRouterWeight(p)), weight(p + "mlp.router.classifier.bias"))
                                                 : at::linear(x, weight(switchRouterWeight(p))))
                                  .contiguous();
    capture.routerLogits.push_back(logits);
    auto routing = routeTokens(toPlain(logits), switchRouterOptions(config().moe));
    if (!routing) throw EngineError(routing.error().code, p + "mlp.router: " + routing.error().message);
    const Routing& r = routing.value();
    at::Tensor out = at::zeros_like(x);
    for (std::int64_t e = 0; e < r.experts; ++e) {
        std::vector<std::int64_t> rows;
        std::vector<float> gates;
        for (std::int64_t t = 0; t < r.n; ++t)
            if (r.expert[static_cast<std::size_t>(t)] == e && r.kept[static_cast<std::size_t>(t)]) {
                rows.push_back(t);
                gates.push_back(r.gate[static_cast<std::size_t>(t)]);
            }
        if (rows.empty()) continue;
        const std::string expert = switchExpertPrefix(p, e);
        auto linear = [&](const at::Tensor& in, const std::string& base) {
            return layout.biases ? at::linear(in, weight(expert + base + ".weight"), weight(expert + base + ".bias"))
                                 : at::linear(in, weight(expert + base + ".weight"));
        };
        const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(rows), at::kLong);
        const at::Tensor gate = at::tensor(at::ArrayRef<float>(gates), at::kFloat).unsqueeze(1);
        const at::Tensor y = linear(activation(linear(x.index_select(0, index), layout.inner)), layout.outer);
        out.index_copy_(0, index, y * gate);
    }
    return out;
}

ModelCapture TransformerModel::run(const at::Tensor& input, bool keepAttention, const ProgressFn& progress,
                                   std::vector<std::string>& notices) {
    const ModelForwardFn forward = familyForward(config());
    if (!forward)
        throw EngineError(ErrorCode::Unsupported, m_checkpoint->folder() + ": " + familyOf(config()).opensElsewhere);
    ModelCapture capture = forward(*this, input, keepAttention, progress);
    // Weights' findings are kept (weights may be released and read again) and repeated on every pass.
    notices.insert(notices.end(), m_weightNotices.begin(), m_weightNotices.end());
    checkModelProgress(progress, config().numLayers, config().numLayers);
    return capture;
}

ModelCapture TransformerModel::forward(const std::vector<std::int64_t>& ids, bool keepAttention,
                                       const ProgressFn& progress, std::vector<std::string>& notices) {
    const ModelConfig& c = config();
    if (familyOf(c).vision) throw EngineError(ErrorCode::InvalidArgument, "this model reads pictures, not text");
    if (ids.empty()) throw EngineError(ErrorCode::InvalidInput, "the text has no tokens: type or paste some text");
    if (static_cast<std::int64_t>(ids.size()) > c.usablePositions())
        throw EngineError(ErrorCode::InvalidArgument, std::to_string(ids.size()) + " tokens, but the model takes at most " +
                                                          std::to_string(c.usablePositions()));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= c.vocabSize)
            throw EngineError(ErrorCode::InvalidInput, "token " + std::to_string(i) + " has id " + std::to_string(ids[i]) +
                                                           ", outside the vocabulary [0, " + std::to_string(c.vocabSize) + ")");
    }
    return run(at::tensor(at::ArrayRef<std::int64_t>(ids), at::kLong), keepAttention, progress, notices);
}

ModelCapture TransformerModel::forwardImage(const std::vector<float>& pixels, std::int64_t size, bool keepAttention,
                                            const ProgressFn& progress, std::vector<std::string>& notices) {
    const ModelConfig& c = config();
    if (!familyOf(c).vision) throw EngineError(ErrorCode::InvalidArgument, "this model reads text, not pictures");
    if (size != c.vit.imageSize || pixels.size() != static_cast<std::size_t>(3 * size * size))
        throw EngineError(ErrorCode::InvalidArgument, "the model reads " + std::to_string(c.vit.imageSize) + " × " +
                                                          std::to_string(c.vit.imageSize) + " pictures");
    const at::Tensor input = at::from_blob(const_cast<float*>(pixels.data()), {3, size, size}, at::kFloat).clone();
    return run(input, keepAttention, progress, notices);
}

}  // namespace attnscope::engine
