#include "attention/run/request_checks.h"

#include "base/kernels/finite_scan.h"
#include "base/runtime/mapped_pages.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

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

std::string formatDuration(double seconds) {
    char text[64];
    if (seconds < 90) std::snprintf(text, sizeof text, "%.0f s", seconds);
    else if (seconds < 90 * 60) std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
    else if (seconds < 36 * 3600) std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
    else std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
    return text;
}

namespace {

struct QkvPart {
    const char* name;
    const SharedFloats* t;
};

}  // namespace

Result<void> checkQkvValues(const SharedQkv& qkv) {
    const QkvPart parts[] = {{"q", &qkv.q}, {"k", &qkv.k}, {"v", &qkv.v}};
    for (const auto& p : parts) {
        const float* values = p.t->data.get();
        // a chunk at a time, a mapped file's pages let go behind the scan (base/runtime/mapped_pages.h)
        std::optional<Error> nonFinite;
        passOverMappedChunks(*p.t, [&](std::int64_t first, std::int64_t chunk) {
            const std::size_t bad = firstNonFiniteChunk(values + first, static_cast<std::size_t>(chunk));
            for (auto i = first + static_cast<std::int64_t>(bad); i < first + chunk; ++i)
                if (!std::isfinite(values[i])) {
                    nonFinite = makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' has a non-finite value (" +
                                                                       std::to_string(values[i]) + ") at flat index " + std::to_string(i));
                    return false;
                }
            return true;
        });
        if (nonFinite) return *nonFinite;
    }
    return {};
}

Result<SharedQkv> shareExplicitQkv(const QkvTensors& qkv) {
    const struct {
        const char* name;
        const PlainTensor* t;
    } parts[] = {{"q", &qkv.q}, {"k", &qkv.k}, {"v", &qkv.v}};
    SharedQkv out;
    SharedFloats* targets[] = {&out.q, &out.k, &out.v};
    for (int i = 0; i < 3; ++i) {
        const PlainTensor& t = *parts[i].t;
        if (t.dtype != DType::F32)
            return makeError(ErrorCode::InvalidInput, std::string("tensor '") + parts[i].name +
                                                          "' must be float32 (F32), got " + dtypeName(t.dtype));
        if (static_cast<std::int64_t>(t.f32.size()) != t.numel())
            return makeError(ErrorCode::InvalidInput, std::string("tensor '") + parts[i].name + "' holds the wrong number of values");
        auto values = std::make_shared<const std::vector<float>>(t.f32);
        targets[i]->shape = t.shape;
        targets[i]->data = std::shared_ptr<const float>(values, values->data());
    }
    return out;
}

Result<ProblemShape> checkExplicitQkv(const SharedQkv& qkv, bool values) {
    const QkvPart parts[] = {{"q", &qkv.q}, {"k", &qkv.k}, {"v", &qkv.v}};
    for (const auto& p : parts) {
        if (!p.t->data) return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' is missing");
        if (p.t->shape.size() != 3)
            return makeError(ErrorCode::InvalidInput,
                             std::string("tensor '") + p.name + "' must have shape [heads, n, d], got " +
                                 std::to_string(p.t->shape.size()) + " dimensions");
        for (auto s : p.t->shape)
            if (s <= 0)
                return makeError(ErrorCode::InvalidInput, std::string("tensor '") + p.name + "' has an empty dimension");
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

Qkv qkvOf(const SharedQkv& qkv) {
    Qkv out;
    out.q = qkv.q;
    out.k = qkv.k;
    out.v = qkv.v;
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

Result<void> checkBudget(const std::string& what, std::uint64_t bytes, std::uint64_t budget, const ProblemShape& shape) {
    if (bytes <= budget) return {};
    return makeError(ErrorCode::OutOfBudget,
                     what + " needs " + formatBytes(bytes) + " (" + std::to_string(bytes) + " bytes) for " +
                         std::to_string(shape.heads) + " heads of " + std::to_string(shape.n) + " queries x " +
                         std::to_string(shape.m) + " keys, over the memory budget of " + formatBytes(budget) +
                         "; choose a sparse variant, a shorter input, fewer heads, or a lower dense limit");
}

}  // namespace attnscope::engine
