#include <attnscope/result_roles.h>

#include <attnscope/variant_catalog.h>

namespace attnscope::engine {

const VariantInfo* infoOf(const AttentionResult& result) { return findVariantInfo(result.variantId); }

int exactReferenceIndex(const RunResult& run) {
    if (run.exactReference >= 0 && run.exactReference < static_cast<int>(run.results.size())) return run.exactReference;
    for (std::size_t i = 0; i < run.results.size(); ++i) {
        const AttentionResult& r = run.results[i];
        const VariantInfo* info = infoOf(r);
        if (info && info->exact && r.n == run.results[0].n && r.m == run.results[0].m) return static_cast<int>(i);
    }
    return -1;
}

}  // namespace attnscope::engine
