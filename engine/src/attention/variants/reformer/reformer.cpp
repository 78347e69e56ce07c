// `reformer`: Reformer's LSH attention.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is reformer_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeReformerWeights(const KeptState& state);  // reformer_weights.cpp

namespace variants::reformer {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "reformer";
    info.name = "Reformer (LSH attention)";
    info.paper = "Kitaev et al. 2020, Reformer: The Efficient Transformer, arXiv 2001.04451";
    info.summary = "Shared-QK angular LSH: sort by hash bucket, attend within chunks and their neighbours; "
                     "rounds combined by log-sum-exp.";
    info.params.push_back(intParam("n_buckets", 0, 0, 1 << 16,
                                     "Hash buckets per round, even; 0 = n / chunk_len rounded up to even (at least 2), "
                                     "as lucidrains."));
    info.params.push_back(intParam("n_hashes", 8, 1, 64, "Hashing rounds."));
    info.params.push_back(intParam("chunk_len", 64, 1, 1 << 20,
                                     "Items per chunk of the sorted list; n is padded to a multiple (with a notice); "
                                     "clamped to n."));
    info.params.push_back(intParam("n_chunks_before", 1, 0, 64, "Chunks each chunk looks back to (wrapping)."));
    info.params.push_back(intParam("n_chunks_after", 0, 0, 64, "Chunks each chunk looks ahead to (wrapping)."));
    info.params.push_back(boolParam("causal", false, "Mask keys after the query (pos_q < pos_k)."));
    info.params.push_back(boolParam("attend_across_buckets", true,
                                      "Keys of other buckets inside the chunk window are attended (both references)."));
    info.params.push_back(boolParam("allow_duplicate_attention", true,
                                      "false: a key seen c times by a query gets score - log(c) on each copy."));
    info.diagnosticsPage = DiagnosticsPage::Lsh;
    info.reasons = {PatternReason::Bucket, PatternReason::Local};
    info.tokenGroups = TokenGroupsSpec{"buckets", "bucket", "hash round", {}};
    info.diagnostics = {
        diagnostic("rotations", DType::F32, "[H, d, n_hashes, n_buckets / 2]", DiagnosticWhen::Always, "The random rotations of the angular LSH."),
        diagnostic("buckets", DType::I64, "[H, n_hashes, n]", DiagnosticWhen::Always, "Each token's bucket per hash round."),
        diagnostic("sorted", DType::I64, "[H, n_hashes, n]", DiagnosticWhen::Always, "Tokens in the order of their (bucket, position) per round."),
        diagnostic("round_weights", DType::F32, "[H, n_hashes, n]", DiagnosticWhen::Always, "Each round's share of a token's output."),
    };
    info.lraSpeedup = "0.8×";
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeReformerWeights}; }

}  // namespace variants::reformer
}  // namespace attnscope::engine
