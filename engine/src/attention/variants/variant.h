#pragma once
// The internal variant interface (CONVENTIONS.md §2): a variant's run. Its facts and schema are
// its catalog entry (attention/catalog/variant_entry.h), bound by the registry; both halves live in the
// variant's folder, attention/variants/<id>/, listed once in attention/catalog/variant_list.h. Runs may use
// LibTorch; results leave as plain data.

#include "base/runtime/run_context.h"
#include "base/api/param_access.h"
#include "attention/catalog/variant_list.h"

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnscope::engine {

struct ProblemShape {
    std::int64_t heads = 0, n = 0, m = 0, d = 0;
    /// The request's dense limit: diagnostics that need n x m matrices are built within it.
    std::int64_t denseLimit = 0;
};

class Variant {
public:
    virtual ~Variant() = default;
    /// Its catalog entry (bound by the registry before any run).
    const VariantInfo& info() const { return *m_info; }
    void bindInfo(const VariantInfo& info) { m_info = &info; }

    /// Bytes the run allocates besides Q, K, V: what its result keeps (output, row statistics,
    /// draws) and its largest scratch. Checked against the memory budget before running.
    virtual std::uint64_t runBytes(const ProblemShape& shape, const ParamValues& params) const = 0;

    /// The keys (or, for kernel and low-rank variants, features) each query is scored against on
    /// average: the run costs about 4 · heads · n · this · d floating-point operations, which
    /// the engine turns into a time estimate before a long run (dense: every key).
    virtual double scoredKeysPerQuery(const ProblemShape& shape, const ParamValues& params) const {
        return static_cast<double>(shape.m);
    }

    /// q, k, v: [heads, n, d] float32, contiguous. `params` are resolved (defaults filled in).
    /// Every random draw comes from ctx.seed and is stored in the result's diagnostics; the row
    /// statistics every weight is recomputed from go into the result's stats (kept_state.h).
    virtual AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const = 0;
    /// True when run() scans explicit Q, K and V for NaN and infinities itself (RunContext::
    /// uncheckedQkv), folded into copies it makes anyway, so the engine need not read them first.
    virtual bool checksQkvValues() const { return false; }
    /// True when run() multiplies through the system BLAS (base/kernels/blas_gemm.h): a torch-free
    /// run then loads it on another thread while it sets up.
    virtual bool multipliesWithBlas() const { return false; }

private:
    const VariantInfo* m_info = nullptr;
};

/// A result with the id, resolved params and shape filled in: how every variant's run() starts.
AttentionResult startResult(const std::string& variantId, const ParamValues& params, const Qkv& qkv);

/// The row status [heads, n] (made with BufferPool::zeros) goes into the result when some row is
/// flagged; otherwise its storage goes back to the pool, for the next run.
void keepRowStatus(PlainTensor&& status, AttentionResult& result, RunContext& ctx);

/// Every variant of the catalog, in its order, each bound to its entry.
std::vector<std::unique_ptr<Variant>> makeAllVariants();
/// The process's one set of them (made on first use), and one by id (null when unknown).
const std::vector<std::unique_ptr<Variant>>& allVariants();
const Variant* findVariant(const std::string& id);

// Each variant's run, made by its folder (variant_list.h): variants::<id>::kernel().
#define ATTNSCOPE_DECLARE_KERNEL(id)   \
    namespace variants::id {           \
    std::unique_ptr<Variant> kernel(); \
    }
ATTNSCOPE_VARIANTS(ATTNSCOPE_DECLARE_KERNEL)
#undef ATTNSCOPE_DECLARE_KERNEL

}  // namespace attnscope::engine
