#pragma once
// Typed readers of the diagnostics the views draw: each checks the names, dtypes and shapes the
// catalog declares (VariantInfo::diagnostics) and hands out the tensors, so no view spells a
// diagnostic's name or guesses its layout. Pointers point into the result.

#include <attnscope/types.h>

#include <optional>

namespace attnscope::engine {

/// Reformer's hashing: buckets I64 [H, rounds, n]; sorted I64 [H, rounds, slots] (optional: older
/// files); rotations F32 (optional); round_weights F32 [H, rounds, n] (optional).
struct LshDiagnostics {
    const PlainTensor* buckets = nullptr;
    const PlainTensor* sorted = nullptr;
    const PlainTensor* rotations = nullptr;
    const PlainTensor* roundWeights = nullptr;
    int heads = 0, rounds = 0, n = 0;
};
std::optional<LshDiagnostics> readLsh(const AttentionResult& result);

/// Routing's k-means: assignments I64 [H, iterations, 2, n] (row 0 queries, row 1 keys),
/// centroids F32 [H, clusters, d]; nearest I64 [H, 2, n] and routed_count I64 [H, n] optional.
struct ClusterDiagnostics {
    const PlainTensor* assignments = nullptr;
    const PlainTensor* centroids = nullptr;
    const PlainTensor* nearest = nullptr;
    const PlainTensor* routedCount = nullptr;
    int heads = 0, iterations = 0, clusters = 0, n = 0;
};
std::optional<ClusterDiagnostics> readClusters(const AttentionResult& result);

/// The exact softmax matrix's spectrum (Linformer): singular_values and energy F32 [H, count];
/// rank90 I64 [H] optional (older files).
struct SpectrumDiagnostics {
    const PlainTensor* singularValues = nullptr;
    const PlainTensor* energy = nullptr;
    const PlainTensor* rank90 = nullptr;
    int heads = 0, count = 0;
};
std::optional<SpectrumDiagnostics> readSpectrum(const AttentionResult& result);
/// True when the variant writes a spectrum (its entry declares one).
bool writesSpectrum(const VariantInfo& info);

/// The result a Diagnostics page draws: results[index] when its variant's page is `page`, else
/// the first result whose variant's page is; nullptr when none is.
const AttentionResult* resultForPage(const RunResult& run, int index, DiagnosticsPage page);

/// True when the variant's Diagnostics page compares it with exact softmax on the same Q, K, V
/// (an approximation's error, a sparse variant's kept mass): the window and recipes run `full`
/// beside it there.
bool diagnosticsNeedExactReference(const std::string& variantId);
/// The same for the spectrum page: a result whose variant writes a spectrum.
const AttentionResult* resultWithSpectrum(const RunResult& run, int index);

}  // namespace attnscope::engine
