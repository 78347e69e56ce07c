// Generation (attnscope/generation.h): the prompt through the family's forward once — the keys
// and values it computed fill the cache, its last hidden state gives the first token — then each
// token through the plain decoder step (io/families/llama/decoder_step.h) over the stored weights.

#include "torch/model/model_session.h"

#include "torch/tensors/to_plain.h"
#include "io/families/family.h"
#include "torch/model/family_forward.h"
#include "torch/model/decoder_step.h"
#include "torch/model/generation_so_far.h"
#include "torch/model/rotary_positions.h"
#include "base/api/engine_error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <limits>
#include <random>

namespace attnscope::engine {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Greedy: the most likely token (the first on a tie). Sampled: softmax(logits / T) over the K most
// likely (all when K is 0), one uniform draw from the seeded generator.
std::int64_t chooseToken(const std::vector<float>& logits, const GenerateRequest& r, std::mt19937_64& rng) {
    if (r.temperature <= 0) return std::max_element(logits.begin(), logits.end()) - logits.begin();
    std::vector<std::int64_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    const std::size_t keep = r.topK > 0 ? std::min<std::size_t>(static_cast<std::size_t>(r.topK), order.size()) : order.size();
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                      [&](std::int64_t a, std::int64_t b) { return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)] || (logits[static_cast<std::size_t>(a)] == logits[static_cast<std::size_t>(b)] && a < b); });
    order.resize(keep);
    const double top = logits[static_cast<std::size_t>(order.front())];
    std::vector<double> weights;
    for (std::int64_t id : order) weights.push_back(std::exp((logits[static_cast<std::size_t>(id)] - top) / r.temperature));
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    const double draw = std::uniform_real_distribution<double>(0.0, total)(rng);
    double sum = 0;
    for (std::size_t i = 0; i < order.size(); ++i)
        if ((sum += weights[i]) > draw) return order[i];
    return order.back();
}

void checkRequest(const GenerateRequest& r) {
    if (r.maxNewTokens < 1 || r.maxNewTokens > 8192)
        throw EngineError(ErrorCode::InvalidArgument, "max new tokens must be in [1, 8192], got " + std::to_string(r.maxNewTokens));
    if (!(r.temperature >= 0) || r.temperature > 100)
        throw EngineError(ErrorCode::InvalidArgument, "temperature must be in [0, 100] (0: greedy)");
    if (r.topK < 0) throw EngineError(ErrorCode::InvalidArgument, "top-k must be 0 (all tokens) or more");
}

DecoderRotary rotaryAt(const ModelConfig& c, std::int64_t length) {
    const at::Tensor inv = ropeInverseFrequencies(c.llama.rope, c.headSize, length, c.maxPositions).contiguous();
    DecoderRotary r;
    r.inverseFrequencies.assign(inv.data_ptr<float>(), inv.data_ptr<float>() + inv.numel());
    r.attentionFactor = static_cast<float>(ropeAttentionFactor(c.llama.rope));
    return r;
}

// The prompt's keys and values as the forward computed them: capture k, v are [heads, n, d] with
// each key/value head repeated for its group of query heads; the cache keeps one per group.
void fillCache(const ModelCapture& capture, const ModelConfig& c, DecoderCache& cache, std::int64_t n) {
    const std::int64_t groups = c.numHeads / c.kvHeads, dh = c.headSize;
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        const at::Tensor k = capture.k[static_cast<std::size_t>(l)].contiguous(), v = capture.v[static_cast<std::size_t>(l)].contiguous();
        for (std::int64_t h = 0; h < c.kvHeads; ++h) {
            const float* ks = k.data_ptr<float>() + h * groups * n * dh;
            const float* vs = v.data_ptr<float>() + h * groups * n * dh;
            std::copy(ks, ks + n * dh, cache.keys[static_cast<std::size_t>(l)].begin() + h * cache.capacity * dh);
            std::copy(vs, vs + n * dh, cache.values[static_cast<std::size_t>(l)].begin() + h * cache.capacity * dh);
        }
    }
    cache.length = n;
}

// The prompt's queries and keys of `layer` as its attention used them ([heads, n, d], after the
// rotation, keys repeated per query head) and its tokens: the start of the run shown while writing.
std::unique_ptr<GenerationSoFar> startSoFar(const ModelInfo& info, const ModelCapture& capture, std::int64_t layer,
                                            const std::vector<std::int64_t>& ids, const ModelTokenizer* tokenizer) {
    const auto shared = [](const at::Tensor& t) {
        const at::Tensor c = t.contiguous();
        auto data = std::shared_ptr<float[]>(new float[static_cast<std::size_t>(c.numel())]);
        std::copy(c.data_ptr<float>(), c.data_ptr<float>() + c.numel(), data.get());
        return SharedFloats{c.sizes().vec(), std::shared_ptr<const float>(data, data.get())};
    };
    std::vector<Token> tokens;
    for (std::int64_t id : ids) tokens.push_back(tokenOfId(tokenizer, id));
    return std::make_unique<GenerationSoFar>(info, static_cast<int>(layer), shared(capture.q[static_cast<std::size_t>(layer)]),
                                             shared(capture.k[static_cast<std::size_t>(layer)]), std::move(tokens));
}

// The three positions of `row` [heads, length] with the largest mean over heads, with their text.
std::vector<LookedAt> strongestOf(const std::vector<float>& row, std::int64_t heads, const std::vector<std::int64_t>& ids,
                                  const ModelTokenizer* tokenizer) {
    const std::int64_t length = static_cast<std::int64_t>(row.size()) / heads;
    std::vector<LookedAt> all;
    for (std::int64_t j = 0; j < length; ++j) {
        float sum = 0;
        for (std::int64_t h = 0; h < heads; ++h) sum += row[static_cast<std::size_t>(h * length + j)];
        all.push_back(LookedAt{j, tokenizer ? tokenizer->decode({ids[static_cast<std::size_t>(j)]}) : std::to_string(ids[static_cast<std::size_t>(j)]),
                               sum / static_cast<float>(heads)});
    }
    const std::size_t keep = std::min<std::size_t>(3, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                      [](const LookedAt& a, const LookedAt& b) { return a.weight > b.weight || (a.weight == b.weight && a.position < b.position); });
    all.resize(keep);
    return all;
}

}  // namespace

GenerateResult ModelSession::generate(const GenerateRequest& request, const GeneratedTokenFn& onToken, const ProgressFn& progress) {
    checkRequest(request);
    if (!m_model) throw EngineError(ErrorCode::InvalidArgument, "captured attention has no model to generate with");
    const ModelConfig& c = m_model->config();
    const FamilyEntry& family = familyOf(c);
    if (familyForward(c) != families::llama::forward())
        throw EngineError(ErrorCode::InvalidArgument, family.name + " models do not generate in AttnScope yet (the Llama decoder's "
                                                                    "families do: Llama, Mistral, Qwen2, Qwen3, Mixtral, Qwen-MoE, OLMoE, Phi-3)");
    GenerateResult result;
    result.prompt = request.prompt;
    if (!request.promptIds.empty()) {
        for (std::int64_t id : request.promptIds)
            if (id < 0 || id >= c.vocabSize)
                throw EngineError(ErrorCode::InvalidArgument, "prompt id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                                                  std::to_string(c.vocabSize) + ")");
        result.promptIds = request.promptIds;
    } else {
        if (!m_tokenizer) throw EngineError(ErrorCode::NotFound, m_info.folder + ": the model has no usable tokenizer to read the prompt with");
        auto encoded = m_tokenizer->encode(request.prompt, true, progress);
        if (!encoded) throw EngineError(encoded.error().code, encoded.error().message);
        for (const Token& t : encoded.value().tokens) result.promptIds.push_back(t.id);
        result.notices = encoded.value().notices;
    }
    const std::int64_t n = static_cast<std::int64_t>(result.promptIds.size());
    if (n == 0) throw EngineError(ErrorCode::InvalidInput, "the prompt has no tokens: type some text");
    if (request.watchLayer >= c.numLayers)
        throw EngineError(ErrorCode::InvalidArgument, "layer " + std::to_string(request.watchLayer) + " is outside the model's " +
                                                          std::to_string(c.numLayers) + " layers");
    if (n + request.maxNewTokens > m_info.maxTokens)
        throw EngineError(ErrorCode::InvalidArgument, "the prompt's " + std::to_string(n) + " tokens and " + std::to_string(request.maxNewTokens) +
                                                          " new ones pass the model's " + std::to_string(m_info.maxTokens) + " positions");
    auto stepper = DecoderStepper::create(m_model->checkpoint(), switchRouterOptions(c.moe));
    if (!stepper) throw EngineError(stepper.error().code, stepper.error().message);

    // the prompt: one pass of the forward
    const auto started = std::chrono::steady_clock::now();
    checkPassBudget(n, false);
    std::vector<std::string> notices;
    ModelCapture capture = m_model->forward(result.promptIds, false, progress, notices);
    DecoderCache cache = stepper.value().emptyCache(n + request.maxNewTokens);
    fillCache(capture, c, cache, n);
    cache.watchLayer = request.watchLayer;
    std::unique_ptr<GenerationSoFar> soFar;
    if (request.watchLayer >= 0) soFar = startSoFar(m_info, capture, request.watchLayer, result.promptIds, m_tokenizer.get());
    std::vector<float> watched = soFar ? soFar->promptLastRow() : std::vector<float>{};
    const at::Tensor last = capture.hidden.back()[n - 1].contiguous();
    std::vector<float> logits = stepper.value().logits(last.data_ptr<float>());
    result.promptSeconds = secondsSince(started);
    capture = ModelCapture{};  // (its keys and values are in the cache now: every layer's Q, K, V freed)
    m_model->freeSpareBuffers();

    // then a token at a time
    const auto stepping = std::chrono::steady_clock::now();
    std::mt19937_64 rng(request.seed);
    std::string decodedSoFar;
    std::vector<std::int64_t> sequence = result.promptIds;
    for (std::int64_t i = 0; i < request.maxNewTokens; ++i) {
        if (progress && !progress(Progress{"generate", i, request.maxNewTokens}))
            throw CancelledError();
        const std::int64_t id = chooseToken(logits, request, rng);
        if (request.stopAtEos && std::find(c.stopTokenIds.begin(), c.stopTokenIds.end(), id) != c.stopTokenIds.end()) {
            result.stoppedAtEos = true;
            break;
        }
        result.generatedIds.push_back(id);
        const std::string decoded = m_tokenizer ? m_tokenizer->decode(result.generatedIds) : std::string();
        // the new text: what decoding the longer sequence added (a character's bytes may span tokens)
        GeneratedToken token;
        token.id = id;
        token.text = decoded.compare(0, decodedSoFar.size(), decodedSoFar) == 0 ? decoded.substr(decodedSoFar.size()) : decoded;
        token.index = i;
        decodedSoFar = decoded;
        if (soFar) {
            token.strongest = strongestOf(watched, c.numHeads, sequence, m_tokenizer.get());
            if (request.liveResults) {  // (the rows are kept only for the runs that show them)
                if (i > 0) soFar->addRow(watched, tokenOfId(m_tokenizer.get(), sequence.back()));  // (the position before this token)
                token.soFar = soFar->snapshot();
            }
            token.attention = std::move(watched);
        }
        sequence.push_back(id);
        if (onToken && !onToken(token)) {
            result.stoppedByCaller = true;
            break;
        }
        if (i + 1 == request.maxNewTokens) break;
        auto next = stepper.value().step(id, cache, rotaryAt(c, cache.length + 1));
        if (!next) throw EngineError(next.error().code, next.error().message);
        logits = std::move(next.value());
        watched = std::move(cache.watched);  // (the row the next token is written from)
    }
    result.generateSeconds = secondsSince(stepping);
    // every token read every weight, so the whole file is in memory now: give its pages back, and a
    // pass on the written sequence holds one layer's at a time again
    m_model->checkpoint().dropMappedPages("");
    result.generatedText = m_tokenizer ? m_tokenizer->decode(result.generatedIds) : std::string();
    for (auto& note : notices) result.notices.push_back(std::move(note));
    return result;
}

}  // namespace attnscope::engine
