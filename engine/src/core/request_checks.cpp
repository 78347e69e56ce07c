#include "core/request_checks.h"

#include "core/finite_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace attnscope::engine {

std::string formatBytes(std::uint64_t bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 5) {
        value /= 1024.0;
        ++unit;
    }
    char text[64];
    if (unit == 0) std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
    else std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

Result<void> checkQkvValues(const QkvTensors& qkv) {
    const struct {
        const char* name;
        const PlainTensor* t;
    } parts[] = {{"q", &qkv.q}, {"k", &qkv.k}, {"v", &qkv.v}};
    for (const auto& p : parts) {
        const std::size_t bad = firstNonFiniteChunk(p.t->f32.data(), p.t->f32.size());
        for (std::size_t i = bad; i < p.t->f32.size(); ++i)
            if (!std::isfinite(p.t->f32[i]))
                return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' has a non-finite value (" +
                                                              std::to_string(p.t->f32[i]) + ") at flat index " +
                                                              std::to_string(i));
    }
    return {};
}

Result<ProblemShape> checkExplicitQkv(const QkvTensors& qkv, bool values) {
    const struct {
        const char* name;
        const PlainTensor* t;
    } parts[] = {{"q", &qkv.q}, {"k", &qkv.k}, {"v", &qkv.v}};
    for (const auto& p : parts) {
        if (p.t->dtype != DType::F32)
            return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' must be float32 (F32), got " +
                                                          dtypeName(p.t->dtype));
        if (p.t->shape.size() != 3)
            return makeError(ErrorCode::InvalidInput,
                             std::string("tensor '") + p.name + "' must have shape [heads, n, d], got " +
                                 std::to_string(p.t->shape.size()) + " dimensions");
        for (auto s : p.t->shape)
            if (s <= 0)
                return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' has an empty dimension");
        if (static_cast<std::int64_t>(p.t->f32.size()) != p.t->numel())
            return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' holds the wrong number of values");
    }
    if (values)
        if (auto finite = checkQkvValues(qkv); !finite) return finite.error();
    const auto& q = qkv.q.shape;
    const auto& k = qkv.k.shape;
    const auto& v = qkv.v.shape;
    if (q[0] != k[0] || q[0] != v[0])
        return makeError(ErrorCode::InvalidInput, "q, k and v must have the same number of heads");
    if (q[2] != k[2]) return makeError(ErrorCode::InvalidInput, "q and k must have the same head dimension d");
    if (k[1] != v[1]) return makeError(ErrorCode::InvalidInput, "k and v must have the same number of keys");
    if (v[2] != q[2])
        return makeError(ErrorCode::InvalidInput, "v must have the same head dimension as q and k in this version");
    return ProblemShape{q[0], q[1], k[1], q[2]};
}

Qkv wrapExplicitQkv(const QkvTensors& qkv) {
    auto wrap = [](const PlainTensor& t) {
        return at::from_blob(const_cast<float*>(t.f32.data()), {t.shape[0], t.shape[1], t.shape[2]}, at::kFloat);
    };
    Qkv out;
    out.q = wrap(qkv.q);
    out.k = wrap(qkv.k);
    out.v = wrap(qkv.v);
    return out;
}

Result<void> checkProjectionSpec(const ProjectionSpec& spec) {
    if (spec.heads < 1 || spec.heads > 256)
        return makeError(ErrorCode::InvalidArgument, "heads must be in [1, 256], got " + std::to_string(spec.heads));
    if (spec.headDim < 1 || spec.headDim > 1024)
        return makeError(ErrorCode::InvalidArgument, "head dim must be in [1, 1024], got " + std::to_string(spec.headDim));
    if (spec.modelDim < 0 || spec.modelDim > 65536)
        return makeError(ErrorCode::InvalidArgument,
                         "model dim must be in [1, 65536] (0 = heads x head dim), got " + std::to_string(spec.modelDim));
    return {};
}

Result<void> checkBudget(const std::string& variant, std::uint64_t bytes, std::uint64_t budget, const ProblemShape& shape) {
    if (bytes <= budget) return {};
    return makeError(ErrorCode::OutOfBudget,
                     "variant '" + variant + "' needs " + formatBytes(bytes) + " (" + std::to_string(bytes) +
                         " bytes) for its " + std::to_string(shape.heads) + " x " + std::to_string(shape.n) + " x " +
                         std::to_string(shape.m) + " attention matrices, over the memory budget of " +
                         formatBytes(budget) + "; choose a sparse variant, a shorter input, or a lower dense limit");
}

}  // namespace attnscope::engine
