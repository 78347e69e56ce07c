#pragma once
// What a routing says about its experts beyond the load: which tokens each expert takes most
// (vocabulary specialisation, as the Switch and ST-MoE papers tabulate it) and which experts are
// chosen together by the same token (co-activation, for top-k routing). Plain C++.

#include <attnscope/moe_router.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct ExpertTokenCount {
    std::string token;       ///< the token's text as shown (TokenizedInput::tokens[i].text)
    std::int64_t count = 0;  ///< tokens of that text sent to the expert (any of the k choices)
};

/// Per expert, the token texts routed to it (kept or dropped), most frequent first (ties: the
/// text first seen earlier), at most `top` each. `input` holds the routing's n tokens.
std::vector<std::vector<ExpertTokenCount>> tokensPerExpert(const Routing& routing, const TokenizedInput& input, int top);

/// [E × E] row-major: cell (i, j) counts the tokens whose k choices include both i and j; the
/// diagonal counts the tokens choosing i at all. With k = 1 only the diagonal is non-zero.
std::vector<std::int64_t> expertCoactivation(const Routing& routing);

}  // namespace attnscope::engine
