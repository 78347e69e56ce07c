#include <attnscope/moe_expert_stats.h>

#include <algorithm>
#include <map>

namespace attnscope::engine {

std::vector<std::vector<ExpertTokenCount>> tokensPerExpert(const Routing& r, const TokenizedInput& input, int top) {
    std::vector<std::vector<ExpertTokenCount>> out(static_cast<std::size_t>(r.experts));
    const std::int64_t n = std::min<std::int64_t>(r.n, static_cast<std::int64_t>(input.tokens.size()));
    for (std::int64_t e = 0; e < r.experts; ++e) {
        // text -> (count, first token index) so ties keep the order of the text
        std::map<std::string, std::pair<std::int64_t, std::int64_t>> counts;
        for (std::int64_t t = 0; t < n; ++t)
            for (std::int64_t c = 0; c < r.k; ++c)
                if (r.expert[static_cast<std::size_t>(t * r.k + c)] == e) {
                    auto [it, fresh] = counts.try_emplace(input.tokens[static_cast<std::size_t>(t)].text, 0, t);
                    ++it->second.first;
                    (void)fresh;
                }
        std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> sorted(counts.begin(), counts.end());
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
            return a.second.first != b.second.first ? a.second.first > b.second.first : a.second.second < b.second.second;
        });
        auto& list = out[static_cast<std::size_t>(e)];
        for (std::size_t i = 0; i < sorted.size() && static_cast<int>(i) < top; ++i)
            list.push_back(ExpertTokenCount{sorted[i].first, sorted[i].second.first});
    }
    return out;
}

std::vector<std::int64_t> expertCoactivation(const Routing& r) {
    const auto experts = static_cast<std::size_t>(r.experts);
    std::vector<std::int64_t> out(experts * experts, 0);
    for (std::int64_t t = 0; t < r.n; ++t) {
        std::vector<bool> chosen(experts, false);
        for (std::int64_t c = 0; c < r.k; ++c) chosen[static_cast<std::size_t>(r.expert[static_cast<std::size_t>(t * r.k + c)])] = true;
        for (std::size_t i = 0; i < experts; ++i)
            for (std::size_t j = 0; j < experts; ++j)
                if (chosen[i] && chosen[j]) ++out[i * experts + j];
    }
    return out;
}

}  // namespace attnscope::engine
