// `routing`: the Routing Transformer's k-means clusters.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is routing_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeRoutingWeights(const KeptState& state);  // routing_weights.cpp

namespace variants::routing {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "routing";
    info.name = "Routing Transformer (k-means)";
    info.paper = "Roy et al. 2021, Efficient Content-Based Sparse Attention with Routing Transformers, arXiv 2003.05997";
    info.summary = "Spherical k-means on normalised queries and keys with shared centroids; attention inside "
                     "clusters (balanced top-w or same-cluster argmax).";
    info.params.push_back(intParam("clusters", 0, 0, 1 << 16, "Number of centroids; 0 = round(sqrt(n)); "
                                                                "more than n is clamped to n (with a notice)."));
    info.params.push_back(intParam("iterations", 3, 1, 1000,
                                     "Spherical k-means steps from the seeded initialisation (lucidrains "
                                     "initialises with 10); each costs one [2n, d] x [d, clusters] GEMM."));
    info.params.push_back(intParam("window_size", 0, 0, 1 << 20,
                                     "topw: queries and keys each cluster takes; 0 = ceil(n / clusters); capped at n."));
    info.params.push_back(choiceParam("mode", "topw", {"topw", "argmax"},
                                        "topw: balanced top-w per cluster, scatter-mean outputs (lucidrains); "
                                        "argmax: query i attends key j iff both have the same nearest centroid (paper)."));
    info.params.push_back(boolParam("causal", false, "Mask keys after the query (j > i)."));
    info.diagnosticsPage = DiagnosticsPage::Clusters;
    info.reasons = {PatternReason::Cluster};
    info.tokenGroups = TokenGroupsSpec{"nearest", "cluster", "", {"queries", "keys"}};
    info.diagnostics = {
        diagnostic("centroids", DType::F32, "[H, clusters, d]", DiagnosticWhen::Always, "The final centroids (shared by queries and keys)."),
        diagnostic("centroid_history", DType::F32, "[H, iterations + 1, clusters, d]", DiagnosticWhen::Always, "The centroids after each k-means step."),
        diagnostic("assignments", DType::I64, "[H, iterations, 2, n]", DiagnosticWhen::Always, "Each query's and key's nearest centroid per step."),
        diagnostic("nearest", DType::I64, "[H, 2, n]", DiagnosticWhen::Always, "Each query's and key's nearest final centroid."),
        diagnostic("routed_count", DType::I64, "[H, n]", DiagnosticWhen::Always, "Clusters each query was routed to."),
        diagnostic("cluster_queries", DType::I64, "[H, clusters, window]", DiagnosticWhen::OnRequest, "mode = topw: the queries each cluster took."),
        diagnostic("cluster_keys", DType::I64, "[H, clusters, window]", DiagnosticWhen::OnRequest, "mode = topw: the keys each cluster took."),
    };
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeRoutingWeights}; }

}  // namespace variants::routing
}  // namespace attnscope::engine
