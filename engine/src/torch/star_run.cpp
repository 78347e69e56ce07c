// Engine::runStar: the Star-Transformer's cycles on a text, with a folder's weights (bytes as
// tokens) or random ones from the seed over the random projections' token states.

#include "torch/tensors/api_guard.h"
#include "torch/model/star_model.h"

#include <attnscope/engine.h>
#include <attnscope/moe_router.h>
#include <attnscope/tokenize.h>

namespace attnscope::engine {
namespace {

std::uint64_t passBytes(std::int64_t n, std::int64_t T, std::int64_t H, std::int64_t D) {
    // nodes and relay per cycle, the ring's and relay's weights, the change; twice for scratch
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    return 2 * sizeof(float) * (u(T + 1) * u(n) * u(D) + u(T + 1) * u(D) + u(T) * u(H) * u(n) * 5 + u(T) * u(H) * u(n + 1) + u(T) * u(n)) +
           sizeof(float) * 12 * u(n) * u(D);  // one cycle's projections and stacked keys
}

}  // namespace

Result<std::shared_ptr<const StarPass>> Engine::runStar(const StarRequest& request, const ProgressFn& progress) {
    return guarded("out of memory running the Star-Transformer: try a shorter input", [&]() -> Result<std::shared_ptr<const StarPass>> {
        c10::InferenceMode inferenceGuard;
        const bool model = !request.modelFolder.empty();
        const star::Weights w = model ? star::loadWeights(request.modelFolder)
                                      : star::randomWeights(request.heads, request.headDim, request.cycles, request.cyclic, request.seed);
        InputSpec spec;
        spec.text = request.text;
        // a folder's tokens: its vocab.txt's words, or the bytes
        spec.tokenizer = !model ? request.tokenizer : w.vocabulary.empty() ? TokenizerKind::Bytes : TokenizerKind::Words;
        auto tokens = tokenize(spec, progress);
        if (!tokens) return tokens.error();
        const std::int64_t n = static_cast<std::int64_t>(tokens->tokens.size());
        if (n == 0) return makeError(ErrorCode::InvalidArgument, "the text is empty: nothing for the satellites");
        if (w.maxLen > 0 && n > w.maxLen)
            return makeError(ErrorCode::InvalidArgument, "the text has " + std::to_string(n) + " tokens; the model's max_len is " +
                                                             std::to_string(w.maxLen));
        if (!request.padding.empty() && static_cast<std::int64_t>(request.padding.size()) != n)
            return makeError(ErrorCode::InvalidArgument, "padding has " + std::to_string(request.padding.size()) +
                                                             " entries for " + std::to_string(n) + " tokens");
        if (const std::uint64_t need = passBytes(n, w.cycles, w.heads, w.hidden); need > memoryBudgetBytes())
            return makeError(ErrorCode::OutOfBudget, "the Star-Transformer's cycles need " + std::to_string(need >> 20) +
                                                         " MiB, over the memory budget of " + std::to_string(memoryBudgetBytes() >> 20) + " MiB");
        at::Tensor embeddings;
        if (model) {
            std::vector<std::int64_t> ids;
            for (const Token& t : tokens->tokens) {
                if (w.vocabulary.empty()) {
                    ids.push_back(t.id);
                    continue;
                }
                auto found = w.vocabulary.find(t.text);
                if (found == w.vocabulary.end()) found = w.vocabulary.find("<unk>");
                if (found == w.vocabulary.end())
                    return makeError(ErrorCode::InvalidInput, "the word '" + t.text + "' is not in the model's vocab.txt, which has no <unk>");
                ids.push_back(found->second);
            }
            embeddings = w.embedding.index_select(0, at::tensor(ids, at::kLong));
        } else {
            PlainTensor states = randomTokenStates(tokens.value(), w.hidden, request.seed);
            embeddings = at::from_blob(states.f32.data(), {n, w.hidden}, at::kFloat).clone();
        }
        auto pass = std::make_shared<StarPass>(star::forward(w, embeddings, request.padding, progress));
        pass->input = std::move(tokens.value());
        pass->modelFolder = request.modelFolder;
        return std::shared_ptr<const StarPass>(std::move(pass));
    });
}

}  // namespace attnscope::engine
