// A run without a model (random projections) as the context index's one-layer pass: the Q and K
// the run drew, and the weights its variant gave them (attnscope/context_search.h).

#include <attnscope/context_search.h>

#include <sstream>

namespace attnscope::engine {
namespace {

PlainTensor copyOf(const SharedFloats& values) {
    PlainTensor out;
    out.dtype = DType::F32;
    out.shape = values.shape;
    if (values.data) out.f32.assign(values.data.get(), values.data.get() + values.numel());
    return out;
}

}  // namespace

std::shared_ptr<const ModelForward> passOfRun(const RunResult& run, bool keepAttention) {
    auto pass = std::make_shared<ModelForward>();
    pass->input = run.input;
    pass->layers = 1;
    pass->heads = run.heads;
    pass->n = run.n;
    pass->headDim = run.headDim;
    QkvTensors qkv;
    qkv.q = copyOf(run.q);
    qkv.k = copyOf(run.k);
    pass->qkv.push_back(std::move(qkv));
    if (keepAttention && !run.results.empty() && run.results.front().weights) {
        const AttentionResult& r = run.results.front();
        PlainTensor weights = PlainTensor::zeros(DType::F32, {r.heads, r.n, r.m});
        for (std::int64_t h = 0; h < r.heads; ++h) {
            const WeightTile tile = r.weights->tile(static_cast<int>(h), 0, r.n, 0, r.m);
            std::copy(tile.weights.begin(), tile.weights.end(), weights.f32.begin() + h * r.n * r.m);
        }
        pass->attention.push_back(std::move(weights));
    }
    return pass;
}

std::string contextProjectionIdentity(const RunResult& run) {
    std::ostringstream out;
    const ProjectionSpec& p = run.projection;
    out << "random projections|" << tokenizerName(run.input.kind) << "|heads " << p.heads << "|d " << p.headDim << "|model "
        << p.modelDim << "|seed " << p.seed << "|qk norm " << p.qkNorm;
    return out.str();
}

Result<std::vector<float>> contextVectorOfRun(const RunResult& run, ContextSpace space, std::int64_t token) {
    if (space == ContextSpace::Hidden)
        return makeError(ErrorCode::InvalidArgument, "random projections have no hidden states: compare keys or queries");
    const SharedFloats& t = space == ContextSpace::Keys ? run.k : run.q;
    if (t.empty() || t.shape.size() != 3) return makeError(ErrorCode::InvalidInput, "the run kept no Q and K");
    const std::int64_t heads = t.shape[0], n = t.shape[1], d = t.shape[2];
    if (token < 0 || token >= n)
        return makeError(ErrorCode::InvalidArgument, "token " + std::to_string(token) + " is out of range (the run has " + std::to_string(n) + ")");
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(heads * d));
    for (std::int64_t h = 0; h < heads; ++h) out.insert(out.end(), t.data.get() + (h * n + token) * d, t.data.get() + (h * n + token + 1) * d);
    return out;
}

}  // namespace attnscope::engine
