// MoE routing as attnscope/moe_router.h describes it. One group at a time: softmax (or DeepSeek-V3's
// sigmoid), top-k by score (plus a choice bias, within the kept expert groups; ties: the lower
// expert), slots claimed in the priority's order, capacity applied, then the losses from the
// scores and the choices before dropping.

#include <attnscope/moe_router.h>

#include "base/runtime/seeded_normal.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope::engine {
namespace {

constexpr std::uint64_t kRouterStream = 0x300000000ull;

Error invalid(const std::string& message) { return makeError(ErrorCode::InvalidArgument, message); }

// The options checked, k resolved. An empty string when they are usable.
std::string optionProblem(const RouterOptions& o, std::int64_t n, std::int64_t experts, std::int64_t& k) {
    if (experts < 1) return "the router has no experts (E = " + std::to_string(experts) + ")";
    if (o.policy != kSwitchPolicy && o.policy != kTopkPolicy) return "policy must be switch or topk, got '" + o.policy + "'";
    if (o.priority != "sequence" && o.priority != "gate") return "priority must be sequence or gate, got '" + o.priority + "'";
    if (o.droppedAs != "paper" && o.droppedAs != "expert0")
        return "dropped_as must be paper or expert0, got '" + o.droppedAs + "'";
    k = choicesPerToken(o.policy, o.k);
    if (o.policy == kSwitchPolicy && k != 1) return "policy switch routes each token to one expert (k = 1), got k = " + std::to_string(k);
    if (k > experts) return "k = " + std::to_string(k) + " exceeds the " + std::to_string(experts) + " experts";
    if (!(o.capacityFactor >= 0) || !std::isfinite(o.capacityFactor))
        return "capacity_factor must be a number >= 0 (0: no capacity), got " + std::to_string(o.capacityFactor);
    if (o.expertCapacity < 0) return "expert_capacity must be >= 0, got " + std::to_string(o.expertCapacity);
    if (o.groupSize < 0) return "group_size must be >= 0, got " + std::to_string(o.groupSize);
    if (o.groupSize > 0 && n % o.groupSize != 0)
        return "group_size " + std::to_string(o.groupSize) + " does not divide the " + std::to_string(n) +
               " tokens into whole groups";
    if (o.scoring != "softmax" && o.scoring != "sigmoid") return "scoring must be softmax or sigmoid, got '" + o.scoring + "'";
    if (!o.choiceBias.empty() && static_cast<std::int64_t>(o.choiceBias.size()) != experts)
        return "the choice bias has " + std::to_string(o.choiceBias.size()) + " entries for " + std::to_string(experts) + " experts";
    if (o.expertGroups < 1 || experts % o.expertGroups != 0)
        return "n_group " + std::to_string(o.expertGroups) + " does not divide the " + std::to_string(experts) + " experts";
    if (o.keptGroups < 1 || o.keptGroups > o.expertGroups)
        return "topk_group must be in [1, n_group = " + std::to_string(o.expertGroups) + "], got " + std::to_string(o.keptGroups);
    if (o.expertGroups > 1 && k > o.keptGroups * (experts / o.expertGroups))
        return "k = " + std::to_string(k) + " exceeds the experts of the " + std::to_string(o.keptGroups) + " groups kept";
    if (o.groupScore != "max" && o.groupScore != "top2") return "group_score must be max or top2, got '" + o.groupScore + "'";
    if (!(o.gateScale > 0) || !std::isfinite(o.gateScale)) return "routed_scaling_factor must be > 0";
    return {};
}

// The order in which a group's (token, choice) pairs claim slots: every first choice before any
// second one; within a rank, by position (sequence) or by falling gate (gate, ties by position).
std::vector<std::pair<std::int64_t, std::int64_t>> claimOrder(const Routing& r, std::int64_t begin, std::int64_t end,
                                                              bool byGate) {
    std::vector<std::pair<std::int64_t, std::int64_t>> order;
    for (std::int64_t rank = 0; rank < r.k; ++rank) {
        std::vector<std::int64_t> tokens(static_cast<std::size_t>(end - begin));
        std::iota(tokens.begin(), tokens.end(), begin);
        if (byGate)
            std::stable_sort(tokens.begin(), tokens.end(), [&](std::int64_t a, std::int64_t b) {
                return r.gate[static_cast<std::size_t>(a * r.k + rank)] > r.gate[static_cast<std::size_t>(b * r.k + rank)];
            });
        for (std::int64_t t : tokens) order.emplace_back(t, rank);
    }
    return order;
}

// The scores experts compete on for one token: its scores plus the choice bias, the experts of
// groups outside the kept ones at 0 (DeepSeek's masked_fill). Groups are ranked by their best
// score (max) or their two best summed (top2), ties to the lower group.
void choiceScores(const float* p, const RouterOptions& o, std::int64_t E, std::vector<double>& out) {
    out.assign(static_cast<std::size_t>(E), 0.0);
    for (std::int64_t e = 0; e < E; ++e) out[static_cast<std::size_t>(e)] = p[e] + (o.choiceBias.empty() ? 0.0 : o.choiceBias[static_cast<std::size_t>(e)]);
    if (o.expertGroups <= 1) return;
    const std::int64_t size = E / o.expertGroups;
    std::vector<double> groupScore(static_cast<std::size_t>(o.expertGroups));
    for (std::int64_t g = 0; g < o.expertGroups; ++g) {
        std::vector<double> members(out.begin() + g * size, out.begin() + (g + 1) * size);
        std::sort(members.rbegin(), members.rend());
        groupScore[static_cast<std::size_t>(g)] = members[0] + (o.groupScore == "top2" && size > 1 ? members[1] : 0.0);
    }
    std::vector<std::int64_t> groups(static_cast<std::size_t>(o.expertGroups));
    std::iota(groups.begin(), groups.end(), 0);
    std::stable_sort(groups.begin(), groups.end(), [&](std::int64_t a, std::int64_t b) {
        return groupScore[static_cast<std::size_t>(a)] > groupScore[static_cast<std::size_t>(b)];
    });
    std::vector<bool> kept(static_cast<std::size_t>(o.expertGroups), false);
    for (std::int64_t g = 0; g < o.keptGroups; ++g) kept[static_cast<std::size_t>(groups[static_cast<std::size_t>(g)])] = true;
    for (std::int64_t e = 0; e < E; ++e)
        if (!kept[static_cast<std::size_t>(e / size)]) out[static_cast<std::size_t>(e)] = 0.0;
}

// Each token's k best experts by choice score (ties: the lower expert); gates their scores,
// renormalised over the k when asked (+1e-20, as DeepSeek), times the scale.
void chooseExperts(Routing& r, const RouterOptions& o) {
    const std::int64_t E = r.experts;
    std::vector<std::int64_t> order(static_cast<std::size_t>(E));
    std::vector<double> choice;
    for (std::int64_t t = 0; t < r.n; ++t) {
        const float* p = r.probs.data() + t * E;
        choiceScores(p, o, E, choice);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
            return choice[static_cast<std::size_t>(a)] > choice[static_cast<std::size_t>(b)];
        });
        double chosen = 0;
        for (std::int64_t c = 0; c < r.k; ++c) chosen += p[order[static_cast<std::size_t>(c)]];
        const double epsilon = o.scoring == "sigmoid" ? 1e-20 : 0.0;
        for (std::int64_t c = 0; c < r.k; ++c) {
            const std::int64_t e = order[static_cast<std::size_t>(c)];
            const double gate = o.normalize ? p[e] / (chosen + epsilon) : p[e];
            r.expert[static_cast<std::size_t>(t * r.k + c)] = e;
            r.gate[static_cast<std::size_t>(t * r.k + c)] = static_cast<float>(gate * o.gateScale);
        }
    }
}

// DeepSeek-V3's scores: each expert's σ(logit), independent of the others.
void sigmoidRows(Routing& r) {
    for (std::size_t i = 0; i < r.logits.size(); ++i) r.probs[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(r.logits[i]))));
}

void softmaxRows(Routing& r) {
    for (std::int64_t t = 0; t < r.n; ++t) {
        const float* l = r.logits.data() + t * r.experts;
        const float big = *std::max_element(l, l + r.experts);
        double sum = 0;
        for (std::int64_t e = 0; e < r.experts; ++e) sum += std::exp(static_cast<double>(l[e]) - big);
        for (std::int64_t e = 0; e < r.experts; ++e)
            r.probs[static_cast<std::size_t>(t * r.experts + e)] = static_cast<float>(std::exp(static_cast<double>(l[e]) - big) / sum);
        r.zLoss += std::pow(big + std::log(sum), 2.0);
    }
    r.zLoss /= static_cast<double>(std::max<std::int64_t>(r.n, 1));
}

// Slots, capacity and the load-balancing loss of tokens [begin, end).
void routeGroup(Routing& r, std::int64_t begin, std::int64_t end, bool byGate, bool droppedAsExpert0) {
    const std::int64_t E = r.experts;
    std::vector<std::int64_t> claimed(static_cast<std::size_t>(E), 0);
    for (const auto& [t, rank] : claimOrder(r, begin, end, byGate)) {
        const auto cell = static_cast<std::size_t>(t * r.k + rank);
        const std::int64_t e = r.expert[cell];
        r.position[cell] = ++claimed[static_cast<std::size_t>(e)];
        r.kept[cell] = r.capacity == 0 || r.position[cell] <= r.capacity;
        ++r.expertCounts[static_cast<std::size_t>(e)];
        if (r.kept[cell]) ++r.keptCounts[static_cast<std::size_t>(e)];
        else ++r.dropped;
    }
    // E · Σ_e f_e P_e: f_e the share of the group's tokens that chose e (any rank; a dropped choice
    // as expert 0 with droppedAsExpert0), P_e the mean probability
    const double tokens = static_cast<double>(end - begin);
    double loss = 0;
    for (std::int64_t e = 0; e < E; ++e) {
        double chose = 0, prob = 0;
        for (std::int64_t t = begin; t < end; ++t) {
            prob += r.probs[static_cast<std::size_t>(t * E + e)];
            bool any = false;
            for (std::int64_t c = 0; c < r.k; ++c) {
                const auto cell = static_cast<std::size_t>(t * r.k + c);
                any = any || (droppedAsExpert0 && !r.kept[cell] ? 0 : r.expert[cell]) == e;
            }
            chose += any ? 1.0 : 0.0;
        }
        loss += (chose / tokens) * (prob / tokens);
    }
    r.auxLoss += static_cast<double>(E) * loss / static_cast<double>(r.groups);
}

}  // namespace

Result<Routing> routeTokens(const PlainTensor& logits, const RouterOptions& o) {
    if (logits.dtype != DType::F32 || logits.shape.size() != 2)
        return invalid("router_logits must be F32 [n, E]");
    Routing r;
    r.n = logits.shape[0];
    r.experts = logits.shape[1];
    if (r.n < 1) return invalid("router_logits has no tokens");
    if (auto problem = optionProblem(o, r.n, r.experts, r.k); !problem.empty()) return invalid(problem);
    for (std::size_t i = 0; i < logits.f32.size(); ++i)
        if (!std::isfinite(logits.f32[i]))
            return invalid("router_logits of token " + std::to_string(static_cast<std::int64_t>(i) / r.experts) + ", expert " +
                           std::to_string(static_cast<std::int64_t>(i) % r.experts) + " is not finite");
    const std::int64_t groupSize = o.groupSize > 0 ? o.groupSize : r.n;
    r.groups = r.n / groupSize;
    // capacity = ceil(k · tokens_per_group / E · capacity_factor), or as given; 0: unlimited
    if (o.expertCapacity > 0)
        r.capacity = o.expertCapacity;
    else if (o.capacityFactor > 0)
        r.capacity = static_cast<std::int64_t>(std::ceil(static_cast<double>(r.k * groupSize) / static_cast<double>(r.experts) *
                                                         o.capacityFactor - 1e-9));
    r.logits = logits.f32;
    r.probs.assign(logits.f32.size(), 0.0f);
    r.expert.assign(static_cast<std::size_t>(r.n * r.k), 0);
    r.gate.assign(r.expert.size(), 0.0f);
    r.position.assign(r.expert.size(), 0);
    r.kept.assign(r.expert.size(), 0);
    r.expertCounts.assign(static_cast<std::size_t>(r.experts), 0);
    r.keptCounts.assign(static_cast<std::size_t>(r.experts), 0);
    softmaxRows(r);  // (the z-loss reads the logits' log-sum-exp whatever the scoring)
    if (o.scoring == "sigmoid") sigmoidRows(r);
    chooseExperts(r, o);
    for (std::int64_t g = 0; g < r.groups; ++g) routeGroup(r, g * groupSize, (g + 1) * groupSize, o.priority == "gate", o.droppedAs == "expert0");
    return r;
}

std::uint64_t routingBytes(std::int64_t n, std::int64_t experts, std::int64_t k, std::int64_t dim) {
    using U = std::uint64_t;
    const auto u = [](std::int64_t v) { return static_cast<U>(std::max<std::int64_t>(v, 0)); };
    // (expert and position are int64, gate float, kept a byte: 21 bytes a choice)
    const U perChoice = 2 * sizeof(std::int64_t) + sizeof(float) + 1;
    return (u(n) + u(experts)) * u(dim) * sizeof(float) + 2 * 2 * u(n) * u(experts) * sizeof(float) +
           2 * u(n) * u(k) * perChoice;
}

Result<PlainTensor> routerLogits(const PlainTensor& hidden, const PlainTensor& router) {
    if (hidden.dtype != DType::F32 || hidden.shape.size() != 2) return invalid("hidden must be F32 [n, d]");
    if (router.dtype != DType::F32 || router.shape.size() != 2) return invalid("router must be F32 [E, d]");
    const std::int64_t n = hidden.shape[0], d = hidden.shape[1], E = router.shape[0];
    if (router.shape[1] != d)
        return invalid("hidden has d = " + std::to_string(d) + " but router has d = " + std::to_string(router.shape[1]));
    for (float v : router.f32)
        if (!std::isfinite(v)) return invalid("router has a value that is not finite");
    PlainTensor out = PlainTensor::zeros(DType::F32, {n, E});
    for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t e = 0; e < E; ++e) {
            double s = 0;
            for (std::int64_t c = 0; c < d; ++c) s += static_cast<double>(hidden.f32[t * d + c]) * router.f32[e * d + c];
            out.f32[static_cast<std::size_t>(t * E + e)] = static_cast<float>(s);
        }
    return out;
}

PlainTensor randomRouter(std::int64_t experts, std::int64_t d, std::uint64_t seed) {
    PlainTensor r = PlainTensor::zeros(DType::F32, {experts, d});
    const double stdDev = 1.0 / std::sqrt(static_cast<double>(d));
    for (std::int64_t e = 0; e < experts; ++e) {
        SeededNormal gen(mixSeed(seed, kRouterStream + static_cast<std::uint64_t>(e)));
        for (std::int64_t c = 0; c < d; ++c) r.f32[static_cast<std::size_t>(e * d + c)] = static_cast<float>(gen.normal() * stdDev);
    }
    return r;
}

std::int64_t choicesPerToken(const std::string& policy, std::int64_t k) {
    return k > 0 ? k : policy == kSwitchPolicy ? 1 : 2;
}

}  // namespace attnscope::engine
