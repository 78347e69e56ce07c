// starReach (attnscope/star_reach.h): the attention flow from the inputs through the cycles,
// O(T · n²) for the n × n matrices it returns.

#include <attnscope/star_reach.h>

#include <cstdlib>

namespace attnscope::engine {

std::int64_t StarReach::ringDistance(std::int64_t i, std::int64_t j) const {
    const std::int64_t d = std::llabs(i - j);
    return cyclic ? std::min(d, n - d) : d;
}

Result<StarReach> starReach(const StarPass& p) {
    const std::int64_t n = p.n, T = p.cycles, H = p.heads;
    const bool shapes = n > 0 && T >= 0 && H > 0 && p.ringWeights.shape == std::vector<std::int64_t>{T, H, n, StarPass::kRingKeys} &&
                        p.relayWeights.shape == std::vector<std::int64_t>{T, H, n + 1} &&
                        p.ringWeights.f32.size() == static_cast<std::size_t>(T * H * n * StarPass::kRingKeys) &&
                        p.relayWeights.f32.size() == static_cast<std::size_t>(T * H * (n + 1));
    if (!shapes) return makeError(ErrorCode::InvalidArgument, "the Star-Transformer pass's weights do not have the shapes [T, H, n, 5] and [T, H, n + 1]");
    StarReach r;
    r.n = n;
    r.cycles = T;
    r.cyclic = p.cyclic;
    std::vector<double> f(static_cast<std::size_t>(n * n), 0.0), relay(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
    for (std::int64_t i = 0; i < n; ++i) f[static_cast<std::size_t>(i * n + i)] = 1.0;
    r.flow.push_back(f);
    r.relay.push_back(relay);
    const auto ring = [&](std::int64_t t, std::int64_t i, int key) {
        double mean = 0;
        for (std::int64_t h = 0; h < H; ++h)
            mean += p.ringWeights.f32[static_cast<std::size_t>(((t * H + h) * n + i) * StarPass::kRingKeys + key)];
        return mean / static_cast<double>(H);
    };
    const auto relayWeight = [&](std::int64_t t, std::int64_t j) {  // j = 0: the relay itself
        double mean = 0;
        for (std::int64_t h = 0; h < H; ++h) mean += p.relayWeights.f32[static_cast<std::size_t>((t * H + h) * (n + 1) + j)];
        return mean / static_cast<double>(H);
    };
    for (std::int64_t t = 0; t < T; ++t) {
        const std::vector<double>& prev = r.flow.back();
        const std::vector<double>& prevRelay = r.relay.back();
        std::vector<double> next(static_cast<std::size_t>(n * n), 0.0);
        for (std::int64_t i = 0; i < n; ++i) {
            double* row = next.data() + i * n;
            const auto addRow = [&](std::int64_t source, double weight) {
                const double* from = prev.data() + source * n;
                for (std::int64_t j = 0; j < n; ++j) row[j] += weight * from[j];
            };
            const std::int64_t left = i > 0 ? i - 1 : (p.cyclic ? n - 1 : -1);
            const std::int64_t right = i + 1 < n ? i + 1 : (p.cyclic ? 0 : -1);
            if (left >= 0) addRow(left, ring(t, i, 0));  // (a phantom neighbour carries nothing)
            addRow(i, ring(t, i, 1));
            if (right >= 0) addRow(right, ring(t, i, 2));
            row[i] += ring(t, i, 3);
            const double viaRelay = ring(t, i, 4);
            for (std::int64_t j = 0; j < n; ++j) row[j] += viaRelay * prevRelay[static_cast<std::size_t>(j)];
        }
        std::vector<double> nextRelay(static_cast<std::size_t>(n), 0.0);
        const double keep = relayWeight(t, 0);
        for (std::int64_t j = 0; j < n; ++j) nextRelay[static_cast<std::size_t>(j)] = keep * prevRelay[static_cast<std::size_t>(j)];
        for (std::int64_t k = 0; k < n; ++k) {
            const double w = relayWeight(t, k + 1);
            for (std::int64_t j = 0; j < n; ++j) nextRelay[static_cast<std::size_t>(j)] += w * next[static_cast<std::size_t>(k * n + j)];
        }
        r.flow.push_back(std::move(next));
        r.relay.push_back(std::move(nextRelay));
    }
    return r;
}

}  // namespace attnscope::engine
