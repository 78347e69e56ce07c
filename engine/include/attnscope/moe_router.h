#pragma once
// Mixture-of-experts routing (Fedus et al. 2021, Switch Transformer; Lepikhin et al. 2021, GShard):
// which expert each token goes to, at which slot of that expert's buffer, who is dropped by the
// capacity, and the balancing losses, as Hugging Face's SwitchTransformersTop1Router,
// load_balancing_loss_func and router_z_loss_func define them (docs/VARIANTS.md "MoE routing").
// Plain C++ and O(n·E): the window re-routes as a slider moves.

#include <attnscope/result.h>
#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// RouterOptions::policy: top-1 as the paper, or the k best experts.
inline constexpr char kSwitchPolicy[] = "switch";
inline constexpr char kTopkPolicy[] = "topk";

struct RouterOptions {
    std::string policy = kSwitchPolicy;  ///< kSwitchPolicy (top-1, the paper) | kTopkPolicy
    std::int64_t k = 0;               ///< choices per token; 0: 1 for switch, 2 for topk
    bool normalize = false;           ///< top-k gates renormalised to sum 1 (Mixtral); false as OLMoE
    double capacityFactor = 1.25;     ///< 0: no capacity (dropless)
    std::int64_t expertCapacity = 0;  ///< > 0: this capacity, as HF's config's expert_capacity
    std::int64_t groupSize = 0;       ///< 0: the whole sequence is one group
    std::string priority = "sequence";  ///< sequence | gate (batch-priority routing)
    /// How the load-balancing loss counts a dropped choice: paper (its expert, chosen before the
    /// capacity, as the paper and mesh-TF) | expert0 (as expert 0, as Hugging Face's Switch, which
    /// takes argmax of the router mask after the capacity).
    std::string droppedAs = "paper";
    /// How a token's expert scores come from its logits: softmax over the experts (every router
    /// before DeepSeek-V3) | sigmoid (DeepSeek-V3: each expert's own σ(logit)). Routing::probs
    /// holds the scores.
    std::string scoring = "softmax";
    /// [E] added to the scores for choosing only, never to the gates (DeepSeek-V3's
    /// e_score_correction_bias); empty: none.
    std::vector<float> choiceBias;
    /// Group-limited choice (DeepSeek): the experts in `expertGroups` equal groups in index order,
    /// a group scored by its best choice score (max, V2) or its two best summed (top2, V3); only
    /// the `keptGroups` best groups' experts compete, the others' scores count as 0 (as the
    /// references mask them). 1 group: every expert competes.
    std::int64_t expertGroups = 1, keptGroups = 1;
    std::string groupScore = "max";
    /// routed_scaling_factor: every gate times it, after any renormalising.
    double gateScale = 1.0;
};

/// Choices per token: `k` when given (> 0), else 1 for switch and 2 for topk.
std::int64_t choicesPerToken(const std::string& policy, std::int64_t k);

/// Everything routed, row-major; [n, k] arrays list each token's choices best first.
struct Routing {
    std::int64_t n = 0, experts = 0, k = 1, groups = 1;
    std::vector<float> logits, probs;         ///< [n, E]; probs = softmax(logits) (sigmoid scoring: σ(logits))
    std::vector<std::int64_t> expert;         ///< [n, k]
    std::vector<float> gate;                  ///< [n, k]
    std::vector<std::int64_t> position;       ///< [n, k] 1-based slot in the expert's buffer (per group)
    std::vector<std::uint8_t> kept;           ///< [n, k] 1 = within the capacity
    std::vector<std::int64_t> expertCounts;   ///< [E] assignments before the capacity
    std::vector<std::int64_t> keptCounts;     ///< [E]
    std::int64_t capacity = 0;                ///< per expert and group; 0 = unlimited
    std::int64_t dropped = 0;                 ///< (token, choice) pairs beyond the capacity
    double auxLoss = 0;  ///< E · Σ_e f_e · P_e per group, averaged over groups (f as droppedAs says)
    double zLoss = 0;    ///< mean over tokens of logsumexp(logits)²
};

/// Routes tokens given their router logits [n, E] (F32). Errors (InvalidArgument) name the
/// option or the token at fault: E < 1, k outside [1, E], switch with k ≠ 1, a negative or
/// non-finite capacity factor, a group size that does not divide n, NaN or infinite logits.
Result<Routing> routeTokens(const PlainTensor& logits, const RouterOptions& options);

/// Bytes routing `n` tokens over `experts` with `k` choices each allocates at its peak: the token
/// states [n, dim] and the router [E, dim] (dim 0 when the logits are given), logits and
/// probabilities [n, E], the choices [n, k], and their copies as the routing file's tensors.
std::uint64_t routingBytes(std::int64_t n, std::int64_t experts, std::int64_t k, std::int64_t dim);

/// logits = hidden · routerᵀ: hidden [n, d], router [E, d] (F32). Errors name the mismatch.
Result<PlainTensor> routerLogits(const PlainTensor& hidden, const PlainTensor& router);

/// A router [E, d] drawn from the seed, entries N(0, 1/d).
PlainTensor randomRouter(std::int64_t experts, std::int64_t d, std::uint64_t seed);

/// The random projections' token representations [n, d] (embedding of the token id from the seed
/// plus the sinusoidal position), the hidden states a seeded router routes for any text.
PlainTensor randomTokenStates(const TokenizedInput& tokens, std::int64_t d, std::uint64_t seed);

}  // namespace attnscope::engine
