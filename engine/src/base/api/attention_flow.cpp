#include "base/api/attention_flow.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace attnscope::engine {
namespace {

/// Dinic's algorithm on a small dense-ish graph with real capacities.
class MaxFlow {
public:
    explicit MaxFlow(std::int64_t nodes) : m_adj(static_cast<std::size_t>(nodes)), m_level(m_adj.size()), m_next(m_adj.size()) {}

    void addEdge(std::int64_t from, std::int64_t to, double capacity) {
        m_adj[static_cast<std::size_t>(from)].push_back(static_cast<std::int64_t>(m_edges.size()));
        m_edges.push_back({to, capacity});
        m_adj[static_cast<std::size_t>(to)].push_back(static_cast<std::int64_t>(m_edges.size()));
        m_edges.push_back({from, 0.0});
    }
    void reset(const std::vector<double>& capacities) {
        for (std::size_t e = 0; e < m_edges.size(); ++e) m_edges[e].capacity = capacities[e];
    }
    std::vector<double> capacities() const {
        std::vector<double> out(m_edges.size());
        for (std::size_t e = 0; e < m_edges.size(); ++e) out[e] = m_edges[e].capacity;
        return out;
    }

    double run(std::int64_t source, std::int64_t sink) {
        double total = 0;
        while (buildLevels(source, sink)) {
            std::fill(m_next.begin(), m_next.end(), 0);
            while (true) {
                const double pushed = push(source, sink, std::numeric_limits<double>::infinity());
                if (pushed <= kEpsilon) break;
                total += pushed;
            }
        }
        return total;
    }

private:
    static constexpr double kEpsilon = 1e-12;
    struct Edge {
        std::int64_t to;
        double capacity;
    };

    bool buildLevels(std::int64_t source, std::int64_t sink) {
        std::fill(m_level.begin(), m_level.end(), -1);
        std::queue<std::int64_t> queue;
        m_level[static_cast<std::size_t>(source)] = 0;
        queue.push(source);
        while (!queue.empty()) {
            const std::int64_t u = queue.front();
            queue.pop();
            for (const std::int64_t e : m_adj[static_cast<std::size_t>(u)]) {
                const Edge& edge = m_edges[static_cast<std::size_t>(e)];
                if (edge.capacity > kEpsilon && m_level[static_cast<std::size_t>(edge.to)] < 0) {
                    m_level[static_cast<std::size_t>(edge.to)] = m_level[static_cast<std::size_t>(u)] + 1;
                    queue.push(edge.to);
                }
            }
        }
        return m_level[static_cast<std::size_t>(sink)] >= 0;
    }

    double push(std::int64_t u, std::int64_t sink, double limit) {
        if (u == sink) return limit;
        auto& next = m_next[static_cast<std::size_t>(u)];
        const auto& edges = m_adj[static_cast<std::size_t>(u)];
        for (; next < edges.size(); ++next) {
            const std::int64_t e = edges[next];
            Edge& edge = m_edges[static_cast<std::size_t>(e)];
            if (edge.capacity <= kEpsilon || m_level[static_cast<std::size_t>(edge.to)] != m_level[static_cast<std::size_t>(u)] + 1)
                continue;
            const double pushed = push(edge.to, sink, std::min(limit, edge.capacity));
            if (pushed > kEpsilon) {
                edge.capacity -= pushed;
                m_edges[static_cast<std::size_t>(e ^ 1)].capacity += pushed;
                return pushed;
            }
        }
        return 0.0;
    }

    std::vector<Edge> m_edges;
    std::vector<std::vector<std::int64_t>> m_adj;
    std::vector<std::int64_t> m_level;
    std::vector<std::size_t> m_next;
};

}  // namespace

namespace {

// Node (l, t) = l * n + t; flow runs upward from the inputs (l = 0) to the outputs (l = depth).
MaxFlow layeredGraph(const std::vector<std::vector<double>>& layers, std::int64_t n) {
    const std::int64_t depth = static_cast<std::int64_t>(layers.size());
    MaxFlow graph((depth + 1) * n);
    for (std::int64_t l = 0; l < depth; ++l)
        for (std::int64_t q = 0; q < n; ++q)
            for (std::int64_t k = 0; k < n; ++k) {
                const double w = layers[static_cast<std::size_t>(l)][static_cast<std::size_t>(q * n + k)];
                if (w > 0) graph.addEdge(l * n + k, (l + 1) * n + q, w);
            }
    return graph;
}

}  // namespace

std::vector<double> attentionFlow(const std::vector<std::vector<double>>& layers, std::int64_t n) {
    const std::int64_t depth = static_cast<std::int64_t>(layers.size());
    MaxFlow graph = layeredGraph(layers, n);
    const std::vector<double> fresh = graph.capacities();
    std::vector<double> flow(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            graph.reset(fresh);
            flow[static_cast<std::size_t>(i * n + j)] = graph.run(j, depth * n + i);
        }
    return flow;
}

std::vector<double> attentionFlowToOutput(const std::vector<std::vector<double>>& layers, std::int64_t n, std::int64_t output,
                                          const std::function<bool(std::int64_t, std::int64_t)>& keepGoing) {
    const std::int64_t depth = static_cast<std::int64_t>(layers.size());
    MaxFlow graph = layeredGraph(layers, n);
    const std::vector<double> fresh = graph.capacities();
    std::vector<double> flow(static_cast<std::size_t>(n), 0.0);
    for (std::int64_t j = 0; j < n; ++j) {
        if (keepGoing && !keepGoing(j, n)) return {};
        graph.reset(fresh);
        flow[static_cast<std::size_t>(j)] = graph.run(j, depth * n + output);
    }
    return flow;
}

}  // namespace attnscope::engine
