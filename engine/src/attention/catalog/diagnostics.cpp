#include <attnscope/diagnostics.h>

#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>

#include <functional>

namespace attnscope::engine {
namespace {

const char* const kSingularValues = "singular_values";

const PlainTensor* find(const AttentionResult& r, const char* name, DType dtype, std::size_t rank) {
    const auto it = r.diagnostics.find(name);
    if (it == r.diagnostics.end() || it->second.dtype != dtype || it->second.shape.size() != rank || it->second.numel() == 0)
        return nullptr;
    return &it->second;
}

const AttentionResult* pick(const RunResult& run, int index, const std::function<bool(const VariantInfo&)>& wanted) {
    const auto matches = [&](const AttentionResult& r) {
        const VariantInfo* info = infoOf(r);
        return info && wanted(*info);
    };
    if (index >= 0 && index < static_cast<int>(run.results.size()) && matches(run.results[static_cast<std::size_t>(index)]))
        return &run.results[static_cast<std::size_t>(index)];
    for (const AttentionResult& r : run.results)
        if (matches(r)) return &r;
    return nullptr;
}

}  // namespace

std::optional<LshDiagnostics> readLsh(const AttentionResult& r) {
    LshDiagnostics d;
    d.buckets = find(r, "buckets", DType::I64, 3);
    if (!d.buckets) return std::nullopt;
    d.heads = static_cast<int>(d.buckets->shape[0]);
    d.rounds = static_cast<int>(d.buckets->shape[1]);
    d.n = static_cast<int>(d.buckets->shape[2]);
    d.sorted = find(r, "sorted", DType::I64, 3);
    if (d.sorted && (d.sorted->shape[0] != d.heads || d.sorted->shape[1] != d.rounds)) d.sorted = nullptr;
    const auto rotations = r.diagnostics.find("rotations");
    d.rotations = rotations == r.diagnostics.end() ? nullptr : &rotations->second;
    d.roundWeights = find(r, "round_weights", DType::F32, 3);
    return d;
}

std::optional<ClusterDiagnostics> readClusters(const AttentionResult& r) {
    ClusterDiagnostics d;
    d.assignments = find(r, "assignments", DType::I64, 4);
    d.centroids = find(r, "centroids", DType::F32, 3);
    if (!d.assignments || !d.centroids || d.assignments->shape[2] != 2) return std::nullopt;
    d.heads = static_cast<int>(d.assignments->shape[0]);
    d.iterations = static_cast<int>(d.assignments->shape[1]);
    d.n = static_cast<int>(d.assignments->shape[3]);
    d.clusters = static_cast<int>(d.centroids->shape[1]);
    d.nearest = find(r, "nearest", DType::I64, 3);
    d.routedCount = find(r, "routed_count", DType::I64, 2);
    return d;
}

std::optional<SpectrumDiagnostics> readSpectrum(const AttentionResult& r) {
    SpectrumDiagnostics d;
    d.singularValues = find(r, kSingularValues, DType::F32, 2);
    d.energy = find(r, "energy", DType::F32, 2);
    if (!d.singularValues || !d.energy || d.energy->shape != d.singularValues->shape) return std::nullopt;
    d.heads = static_cast<int>(d.singularValues->shape[0]);
    d.count = static_cast<int>(d.singularValues->shape[1]);
    d.rank90 = find(r, "rank90", DType::I64, 1);
    return d;
}

bool writesSpectrum(const VariantInfo& info) { return info.findDiagnostic(kSingularValues) != nullptr; }

const AttentionResult* resultForPage(const RunResult& run, int index, DiagnosticsPage page) {
    return pick(run, index, [page](const VariantInfo& info) { return info.diagnosticsPage == page; });
}

bool diagnosticsNeedExactReference(const std::string& variantId) {
    const VariantInfo* info = findVariantInfo(variantId);
    return info && (info->approximatesSoftmax || info->diagnosticsPage == DiagnosticsPage::Sparsity);
}

const AttentionResult* resultWithSpectrum(const RunResult& run, int index) { return pick(run, index, writesSpectrum); }

}  // namespace attnscope::engine
