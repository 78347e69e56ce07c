#pragma once
// What reaches each Star-Transformer satellite after t cycles (the paper's argument made visible:
// local information travels one neighbour per cycle along the ring, long-range information through
// the relay). Torch-free.
//
// Structure: input j can influence node i after t cycles through the ring when their ring distance
// is at most t; through the relay always, since s⁰ is the mean of every embedding (a relay path
// from a node's *updated* state, node → relay → node, takes two cycles).
//
// Flow: the share of node i's state at cycle t that comes from input j, following the attention
// weights (heads averaged) as rollout does for layers: F⁰ = I, R⁰ = 1/n (the mean);
//   Fᵗ[i] = α_left Fᵗ⁻¹[i−1] + α_self Fᵗ⁻¹[i] + α_right Fᵗ⁻¹[i+1] + α_emb e_i + α_relay Rᵗ⁻¹
//   Rᵗ    = β_relay Rᵗ⁻¹ + Σ_j β_j Fᵗ[j]
// where e_i is input i itself. The open ring's phantom neighbour carries nothing, so those rows sum
// to less than 1 by its weight.

#include <attnscope/result.h>
#include <attnscope/star_transformer.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct StarReach {
    std::int64_t n = 0, cycles = 0;
    /// flow[t] [n × n] row-major, t = 0 … T: node i's share from input j (flow[0] = I).
    std::vector<std::vector<double>> flow;
    /// relay[t] [n]: the relay's share from input j.
    std::vector<std::vector<double>> relay;
    /// Ring distance of i and j (the shorter way round on a closed ring).
    std::int64_t ringDistance(std::int64_t i, std::int64_t j) const;
    bool cyclic = false;
    double at(std::int64_t t, std::int64_t i, std::int64_t j) const {
        return flow[static_cast<std::size_t>(t)][static_cast<std::size_t>(i * n + j)];
    }
};

/// From a pass's ring and relay weights, heads averaged. InvalidArgument for a pass whose tensors
/// do not have the shapes of attnscope/star_transformer.h.
Result<StarReach> starReach(const StarPass& pass);

}  // namespace attnscope::engine
