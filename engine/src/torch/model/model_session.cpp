#include "torch/tensors/tensor_views.h"
#include "torch/model/model_session.h"

#include "io/checkpoint/gguf_file.h"
#include "io/families/family.h"
#include "torch/model/family_forward.h"

#include "torch/model/latent_profile.h"
#include "torch/model/rotary_profile.h"

#include "torch/model/captured_attention.h"
#include "torch/model/model_pass_bytes.h"

#include "attention/run/request_checks.h"
#include "io/tokenize/gguf_tokenizer.h"
#include "torch/tensors/to_plain.h"
#include "attention/catalog/result_weights.h"

#include <algorithm>
#include <cstring>

namespace attnscope::engine {

namespace {

/// Dense [heads, n, n] weights of a variant's result (its tiles over the first n keys: Star's
/// relay column is left out).
at::Tensor denseWeights(AttentionResult& r, const Qkv& qkv) {
    if (auto attached = attachWeights(r, qkv.q, qkv.k, qkv.keyPadding); !attached)
        throw EngineError(ErrorCode::Internal, attached.error().message);
    at::Tensor out = at::empty({r.heads, r.n, r.n}, at::kFloat);
    for (int h = 0; h < r.heads; ++h) {
        const WeightTile t = r.weights->tile(h, 0, r.n, 0, r.n);
        std::memcpy(out[h].data_ptr<float>(), t.weights.data(), t.weights.size() * sizeof(float));
    }
    return out;
}

// Before anything is read: the weights a pass holds in F32 plus, for a decoder that upcasts layer
// by layer, the mapped file pages it holds at once (a finished layer's pages are dropped: its
// largest layer's and those outside the layers but the embedding's).
Result<void> checkModelFitsBudget(const ModelCheckpoint& checkpoint, std::uint64_t budget) {
    const ModelConfig& c = checkpoint.config();
    const FamilyEntry& family = familyOf(c);
    const bool layerByLayer = family.layerByLayer;
    const std::uint64_t held = modelPassBytes(c, 1, false).weights;
    const std::uint64_t mapped = layerByLayer ? checkpoint.residentBytes(family.layerStem) : 0;
    if (held + mapped <= budget) return {};
    const std::string need = layerByLayer
                                 ? formatBytes(mapped) + " of weight files mapped at once (its largest layer) plus " + formatBytes(held) +
                                       " for that layer in float32"
                                 : formatBytes(held) + " for its weights in float32";
    return Error{ErrorCode::OutOfBudget, checkpoint.folder() + ": the model needs " + need + ", over the memory budget of " +
                                             formatBytes(budget) + ": open a smaller model or raise the memory budget"};
}

}  // namespace

Result<std::unique_ptr<ModelSession>> ModelSession::openCaptured(const std::string& path, std::uint64_t memoryBudget) {
    auto captured = readCapturedAttention(path, memoryBudget);
    if (!captured) return captured.error();
    CapturedAttention& c = captured.value();
    std::unique_ptr<ModelSession> session(new ModelSession());
    session->m_budget = memoryBudget;
    session->m_captured = true;
    ModelInfo& info = session->m_info;
    info.folder = path;
    info.arch = "captured";
    info.layers = c.layers;
    info.heads = c.heads;
    info.kvHeads = c.heads;
    info.headDim = c.headDim;
    info.hiddenSize = c.heads * c.headDim;
    info.maxTokens = c.n;
    info.causal = c.causal;
    info.tokenizer = "captured";
    info.attention = c.model.empty() ? "captured" : "captured from " + c.model;
    info.capturedText = c.tokens.text;
    if (c.headDim == 0)
        info.warnings.push_back("the file holds attention weights only: the head atlas reads them; variant runs need its q, k, v");
    auto pass = std::make_unique<Pass>();
    pass->text = c.tokens.text;
    pass->keepAttention = true;
    pass->tokens = c.tokens;
    pass->special.assign(c.tokens.tokens.size(), false);
    for (const auto& t : c.tokens.tokens) pass->ids.push_back(t.id);
    pass->notices.push_back(path + ": attention captured on its own " + std::to_string(c.n) +
                            " tokens; the typed text is not tokenized");
    pass->capture.q = std::move(c.q);
    pass->capture.k = std::move(c.k);
    pass->capture.v = std::move(c.v);
    pass->capture.attention = std::move(c.attention);
    session->m_last = std::move(pass);
    return session;
}

std::uint64_t ModelSession::passBytes(std::int64_t tokens, bool keepAttention) const {
    return m_captured ? 0 : modelPassBytes(m_model->config(), tokens, keepAttention).total();
}

Result<std::unique_ptr<ModelSession>> ModelSession::open(const std::string& folder, const VariantLookup& lookup,
                                                         std::uint64_t memoryBudget) {
    if (isCapturedAttentionPath(folder)) return openCaptured(folder, memoryBudget);
    auto checkpoint = ModelCheckpoint::open(folder);
    if (!checkpoint) return checkpoint.error();
    if (auto fits = checkModelFitsBudget(*checkpoint.value(), memoryBudget); !fits) return fits.error();
    std::unique_ptr<ModelSession> session(new ModelSession());
    session->m_budget = memoryBudget;
    const ModelConfig& c = checkpoint.value()->config();
    const FamilyEntry& family = familyOf(c);
    ModelInfo& info = session->m_info;
    info.folder = folder;
    info.arch = family.id;
    info.familyName = family.name;
    info.modelType = c.modelType;
    info.layers = c.numLayers;
    info.heads = c.numHeads;
    info.kvHeads = c.kvHeads;
    info.headDim = c.headDim();
    info.hiddenSize = c.hiddenSize;
    info.vocabSize = c.vocabSize;
    info.maxTokens = c.usablePositions();
    info.causal = c.causal;
    info.weightBytes = checkpoint.value()->mappedBytes();
    info.weightFormat = checkpoint.value()->gguf() ? "GGUF" : "safetensors";
    info.weightTypes = checkpoint.value()->storageTypes();
    info.generates = familyForward(c) == families::llama::forward();
    info.residentWeightBytes = family.layerByLayer ? checkpoint.value()->residentBytes(family.layerStem) : info.weightBytes;
    info.experts = c.moe.experts;
    info.capacityFactor = c.moe.active() ? c.moe.capacityFactor : 0.0;
    info.expertCapacity = c.moe.expertCapacity;
    info.routerK = c.moe.topK;
    info.routerNormalize = c.moe.normalizeTopK;
    info.routerScoring = c.moe.scoring;
    info.routerGroups = c.moe.expertGroups;
    info.routerKeptGroups = c.moe.keptGroups;
    info.routerGroupScore = c.moe.groupScore;
    info.routerScale = c.moe.gateScale;
    for (std::int64_t l = 0; l < c.numLayers; ++l)
        if (c.switchLayer(l)) info.expertLayers.push_back(l);
    info.warnings = checkpoint.value()->warnings();
    if (family.vision) {
        info.imageSize = c.vit.imageSize;
        info.patchSize = c.vit.patchSize;
        info.prefixTokens = c.vit.prefixTokens();
        info.tokenizer = "image";
        auto pre = loadVitPreprocessor(folder, c.vit.imageSize, info.warnings);
        if (!pre) return pre.error();
        session->m_preprocessor = pre.value();
    } else if (auto tokenizer = checkpoint.value()->gguf() ? makeGgufTokenizer(checkpoint.value()->gguf()->header(), folder)
                                                           : loadModelTokenizer(folder, family.tokenizer, c.modelType, c.bosTokenId, c.eosTokenId)) {
        // A folder without tokenizer files still serves explicit ids; text then gets a clear error.
        session->m_tokenizer = tokenizer.value();
        const ModelTokenizerKind kind = tokenizer.value()->kind();
        info.tokenizer = kind == ModelTokenizerKind::WordPiece       ? "wordpiece"
                         : kind == ModelTokenizerKind::Bytes         ? "bytes"
                         : kind == ModelTokenizerKind::SentencePiece ? "sentencepiece"
                                                                     : "byte-level-bpe";
        for (const auto& note : tokenizer.value()->loadNotices()) info.warnings.push_back(note);
        if (tokenizer.value()->vocabSize() > c.vocabSize)
            info.warnings.push_back("the tokenizer has " + std::to_string(tokenizer.value()->vocabSize()) +
                                    " tokens, the model's embedding only " + std::to_string(c.vocabSize));
    } else {
        info.warnings.push_back("no usable tokenizer: " + tokenizer.error().message);
    }
    if (family.openNotices)
        for (auto& notice : family.openNotices(c)) info.warnings.push_back(std::move(notice));
    if (family.variantDefaults) info.variantDefaults = family.variantDefaults(c);
    session->m_model = std::make_unique<TransformerModel>(std::move(checkpoint.value()));
    if (auto own = session->declareOwnAttention(lookup, family); !own) return own.error();
    return session;
}

// Every layer's own attention as its family declares it, or, for a model the trainer trained with
// another variant (through a forward that takes it), that variant with its parameters and seed.
Result<void> ModelSession::declareOwnAttention(const VariantLookup& lookup, const FamilyEntry& family) {
    ModelInfo& info = m_info;
    const ModelConfig& cfg = m_model->config();
    info.attention = "softmax";
    info.training = cfg.training;
    for (std::int64_t l = 0; l < cfg.numLayers; ++l) {
        const LayerAttention own = family.ownAttention(cfg, l);
        info.layerAttention.push_back(LayerAttentionInfo{own.variant, own.params, own.seed, own.summary});
        const auto window = own.params.find("window");
        info.layerWindows.push_back(window == own.params.end() ? 0 : std::get<std::int64_t>(window->second));
    }
    if (cfg.attentionVariant.empty() || cfg.attentionVariant == "full" || !family.takesTrainedVariant) return {};
    const std::string configPath = info.folder + "/config.json";
    const Variant* variant = lookup ? lookup(cfg.attentionVariant) : nullptr;
    if (!variant)
        return Error{ErrorCode::Unsupported, configPath + ": the model was trained with variant '" + cfg.attentionVariant +
                                                 "', which this build does not have"};
    ParamValues given;
    info.attention = cfg.attentionVariant;
    for (const auto& [name, text] : cfg.attentionParams) {
        const ParamSpec* spec = variant->info().findParam(name);
        if (!spec)
            return Error{ErrorCode::InvalidInput, configPath + ": variant '" + cfg.attentionVariant + "' has no parameter '" + name + "'"};
        auto value = parseParamValue(*spec, text);
        if (!value) return Error{ErrorCode::InvalidInput, configPath + ": " + value.error().message};
        given[name] = value.value();
        info.attention += " " + name + "=" + text;
    }
    auto params = resolveParams(variant->info(), given);
    if (!params) return Error{ErrorCode::InvalidInput, configPath + ": " + params.error().message};
    for (auto& layer : info.layerAttention)
        layer = LayerAttentionInfo{cfg.attentionVariant, params.value(), cfg.attentionSeed,
                                   variant->info().name + " (as trained: " + info.attention + ")"};
    const std::uint64_t seed = cfg.attentionSeed;
    // The model attends exactly as it was trained: through the same variant code as every run.
    m_model->setAttentionHook([this, variant, resolved = params.value(), seed](const at::Tensor& q, const at::Tensor& k,
                                                                               const at::Tensor& v, bool keepWeights,
                                                                               at::Tensor& weights) {
        static const ProgressFn kNoProgress;
        RunContext ctx(m_pool, kNoProgress);
        ctx.seed = seed;
        Qkv qkv = qkvOf(q, k, v);
        AttentionResult r = variant->run(qkv, resolved, ctx);
        // Views and the atlas take [heads, n, n]: extra keys (Star's relay) are left out of
        // the captured weights, so those rows sum to 1 minus the relay's share.
        if (keepWeights) weights = denseWeights(r, qkv);
        return at::from_blob(const_cast<float*>(r.output.data()), {r.heads, r.n, r.d}, at::kFloat).clone();
    });
    return {};
}

void ModelSession::checkPassBudget(std::int64_t tokens, bool keepAttention) const {
    const ModelPassBytes need = modelPassBytes(m_model->config(), tokens, keepAttention);
    if (need.total() <= m_budget) return;
    throw EngineError(ErrorCode::OutOfBudget,
                      "the model's forward pass on " + std::to_string(tokens) + " tokens needs " + formatBytes(need.total()) +
                          " (weights " + formatBytes(need.weights) + ", kept per layer " + formatBytes(need.kept) +
                          ", temporaries " + formatBytes(need.scratch) + "), over the memory budget of " +
                          formatBytes(m_budget) + ": shorten the text or raise the memory budget");
}

Token tokenOfId(const ModelTokenizer* tokenizer, std::int64_t id) {
    Token t;
    t.id = id;
    // the token's own text where it decodes to some ("␣world", not "Ġworld"), else its spelling
    const std::string decoded = tokenizer ? tokenizer->decode({id}) : std::string();
    t.text = !decoded.empty() ? decoded : tokenizer ? tokenizer->tokenString(id) : std::to_string(id);
    return t;
}

const ModelSession::Pass& ModelSession::run(const ModelInput& input, const ProgressFn& progress) {
    if (m_captured) return *m_last;
    if (input.image || m_preprocessor) return runImage(input, progress);
    const bool byIds = !input.ids.empty();
    if (m_last && !byIds && m_last->text == input.text && m_last->addSpecialTokens == input.addSpecialTokens &&
        (m_last->keepAttention || !input.keepAttention))
        return *m_last;
    if (m_last && byIds && m_last->byIds && m_last->ids == input.ids && (m_last->keepAttention || !input.keepAttention))
        return *m_last;  // (every layer of a generated sequence, one pass)

    auto pass = std::make_unique<Pass>();
    pass->text = input.text;
    pass->addSpecialTokens = input.addSpecialTokens;
    pass->keepAttention = input.keepAttention;
    pass->tokens.text = input.text;
    pass->tokens.kind = TokenizerKind::Model;
    if (byIds) {
        pass->byIds = true;
        pass->ids = input.ids;
        for (std::int64_t id : input.ids) pass->tokens.tokens.push_back(tokenOfId(m_tokenizer.get(), id));
        if (m_tokenizer && pass->tokens.text.empty()) pass->tokens.text = m_tokenizer->decode(input.ids);
        pass->special.assign(input.ids.size(), false);
    } else {
        if (!m_tokenizer)
            throw EngineError(ErrorCode::NotFound, m_info.folder + ": the model folder has no usable tokenizer "
                                                                   "(vocab.txt, vocab.json + merges.txt, tokenizer.json, "
                                                                   "tokenizer.model or spiece.model)");
        auto encoded = m_tokenizer->encode(input.text, input.addSpecialTokens, progress);
        if (!encoded) throw EngineError(encoded.error().code, encoded.error().message);
        const auto& flags = encoded.value().special;
        if (std::find(flags.begin(), flags.end(), false) == flags.end())
            throw EngineError(ErrorCode::InvalidInput, "the text has no tokens: type or paste some text");
        pass->notices = encoded.value().notices;
        pass->special = encoded.value().special;
        pass->tokens.tokens = std::move(encoded.value().tokens);
        // Token::text is the token's bytes in the input (types.h), so views show "␣world" and not
        // the vocabulary's spelling "Ġworld"; template specials have no bytes and keep "[CLS]".
        for (auto& t : pass->tokens.tokens) {
            if (t.byteEnd > t.byteBegin && t.byteEnd <= static_cast<std::int64_t>(input.text.size()))
                t.text = input.text.substr(static_cast<std::size_t>(t.byteBegin), static_cast<std::size_t>(t.byteEnd - t.byteBegin));
        }
        for (const auto& t : pass->tokens.tokens) pass->ids.push_back(t.id);
        const std::int64_t total = static_cast<std::int64_t>(pass->ids.size());
        if (total > m_info.maxTokens) {
            // Keep the closing special token (BERT's [SEP], RoBERTa's </s>) as truncation does.
            const auto& special = encoded.value().special;
            const bool keepLast = input.addSpecialTokens && !special.empty() && special.back();
            const std::int64_t head = keepLast ? m_info.maxTokens - 1 : m_info.maxTokens;
            auto& tokens = pass->tokens.tokens;
            if (keepLast) {
                tokens[static_cast<std::size_t>(head)] = tokens.back();
                pass->special[static_cast<std::size_t>(head)] = true;
            }
            tokens.resize(static_cast<std::size_t>(m_info.maxTokens));
            pass->special.resize(tokens.size());
            pass->ids.clear();
            for (const auto& t : tokens) pass->ids.push_back(t.id);
            pass->notices.push_back("the text has " + std::to_string(total) + " tokens but the model takes at most " +
                                    std::to_string(m_info.maxTokens) + "; only the first " + std::to_string(head) +
                                    " text tokens were used");
        }
    }
    checkPassBudget(static_cast<std::int64_t>(pass->ids.size()), input.keepAttention);
    pass->capture = m_model->forward(pass->ids, input.keepAttention, progress, pass->notices);
    m_last = std::move(pass);
    return *m_last;
}

std::shared_ptr<const ModelForward> ModelSession::forward(const ModelInput& input, const ProgressFn& progress) {
    const Pass& pass = run(input, progress);
    auto out = std::make_shared<ModelForward>();
    out->input = pass.tokens;
    out->layers = m_info.layers;
    out->heads = m_info.heads;
    out->headDim = m_info.headDim;
    out->hiddenSize = m_info.hiddenSize;
    out->causal = m_info.causal;
    out->n = static_cast<std::int64_t>(pass.ids.size());
    out->notices = pass.notices;
    for (std::size_t l = 0; l < pass.capture.q.size(); ++l)
        out->qkv.push_back(QkvTensors{toPlain(pass.capture.q[l]), toPlain(pass.capture.k[l]), toPlain(pass.capture.v[l])});
    if (input.keepAttention) {
        for (const auto& a : pass.capture.attention) out->attention.push_back(toPlain(a));
    }
    for (const auto& h : pass.capture.hidden) out->hidden.push_back(toPlain(h));
    for (const auto& logits : pass.capture.routerLogits) out->routerLogits.push_back(logits.defined() ? toPlain(logits) : PlainTensor{});
    out->routerChoiceBias = pass.capture.routerChoiceBias;
    return out;
}

Qkv ModelSession::layerQkv(const ModelInput& given, int layer, const ProgressFn& progress, TokenizedInput& tokens,
                           std::vector<std::string>& notices, std::map<std::string, PlainTensor>* inputs,
                           std::optional<ModelRouting>* routing) {
    if (layer < 0 || layer >= m_info.layers)
        throw EngineError(ErrorCode::InvalidArgument, "layer " + std::to_string(layer) + " is outside [0, " +
                                                          std::to_string(m_info.layers - 1) + "] for this model");
    ModelInput input = given;
    // A picture's pass is small (a few hundred patches) and its views read every layer's weights.
    input.keepAttention = input.image.has_value();
    const Pass& pass = run(input, progress);
    if (pass.capture.q.empty())
        throw EngineError(ErrorCode::InvalidArgument, m_info.folder + " holds attention weights only (no 'q', 'k', 'v'): variants "
                                                                      "run on q, k and v; the head atlas reads the weights");
    tokens = pass.tokens;
    notices = pass.notices;
    const auto l = static_cast<std::size_t>(layer);
    Qkv qkv = qkvOf(pass.capture.q[l], pass.capture.k[l], pass.capture.v[l]);
    if (inputs) *inputs = l < pass.capture.variantInputs.size() ? pass.capture.variantInputs[l] : std::map<std::string, PlainTensor>{};
    if (routing && l < pass.capture.routerLogits.size() && pass.capture.routerLogits[l].defined()) {
        ModelRouting model;
        model.logits = toPlain(pass.capture.routerLogits[l]);
        for (const auto& logits : pass.capture.routerLogits)
            model.layerLogits.push_back(logits.defined() ? toPlain(logits) : PlainTensor{});
        model.capacityFactor = m_info.capacityFactor;
        model.expertCapacity = m_info.expertCapacity;
        model.k = m_info.routerK;
        model.normalize = m_info.routerNormalize;
        model.scoring = m_info.routerScoring;
        model.layerChoiceBias = pass.capture.routerChoiceBias;
        model.expertGroups = m_info.routerGroups;
        model.keptGroups = m_info.routerKeptGroups;
        model.groupScore = m_info.routerGroupScore;
        model.gateScale = m_info.routerScale;
        *routing = std::move(model);
    }
    return qkv;
}

std::optional<RotaryDistanceProfile> ModelSession::rotaryProfile(int layer, std::vector<std::string>& notices) const {
    if (!m_model || !m_last) return std::nullopt;
    const auto rope = familyOf(m_model->config()).rope;
    if (!rope) return std::nullopt;
    const auto l = static_cast<std::size_t>(layer);
    if (layer < 0 || l >= m_last->capture.q.size() || l >= m_last->capture.k.size()) return std::nullopt;
    const at::Tensor& q = m_last->capture.q[l];
    if (q.size(1) > kRotaryProfileMaxTokens) {
        notices.push_back("the rotary-position profile (Diagnostics) is computed for texts of up to " +
                          std::to_string(kRotaryProfileMaxTokens) + " tokens; this one has " + std::to_string(q.size(1)));
        return std::nullopt;
    }
    const ModelConfig& c = m_model->config();
    return rotaryDistanceProfile(q, m_last->capture.k[l], *rope(c, layer), c.maxPositions);
}

std::optional<LatentAttentionProfile> ModelSession::latentProfile(int layer, std::vector<std::string>& notices) const {
    if (!m_model || !m_last) return std::nullopt;
    const auto shape = familyOf(m_model->config()).latentShape;
    if (!shape) return std::nullopt;
    const auto l = static_cast<std::size_t>(layer);
    if (layer < 0 || l >= m_last->capture.q.size() || l >= m_last->capture.k.size()) return std::nullopt;
    const at::Tensor& q = m_last->capture.q[l];
    if (q.size(1) > kLatentProfileMaxTokens) {
        notices.push_back("the latent-key profile (Diagnostics) is computed for texts of up to " + std::to_string(kLatentProfileMaxTokens) +
                          " tokens; this one has " + std::to_string(q.size(1)));
        return std::nullopt;
    }
    const LatentAttentionShape s = shape(m_model->config());
    return latentAttentionProfile(q, m_last->capture.k[l], s.nope, s.rope, s.latentRank);
}

}  // namespace attnscope::engine
