#include <attnscope/result_roles.h>

#include <attnscope/variant_catalog.h>

namespace attnscope::engine {

const VariantInfo* infoOf(const AttentionResult& result) { return findVariantInfo(result.variantId); }

std::int64_t tokenKeys(const AttentionResult& result) {
    const VariantInfo* info = infoOf(result);
    const std::int64_t extra = info && result.m == result.n + info->extraKeys ? info->extraKeys : 0;
    return result.m - extra;
}

bool comparableShapes(const AttentionResult& a, const AttentionResult& b) {
    return a.heads == b.heads && a.n == b.n && tokenKeys(a) == tokenKeys(b);
}

int exactReferenceIndex(const RunResult& run) {
    if (run.exactReference >= 0 && run.exactReference < static_cast<int>(run.results.size())) return run.exactReference;
    for (std::size_t i = 0; i < run.results.size(); ++i) {
        const AttentionResult& r = run.results[i];
        const VariantInfo* info = infoOf(r);
        if (info && info->exact && comparableShapes(r, run.results[0])) return static_cast<int>(i);
    }
    return -1;
}

int referenceIndex(const RunResult& run) { return run.ownAttention >= 0 ? run.ownAttention : exactReferenceIndex(run); }

}  // namespace attnscope::engine
