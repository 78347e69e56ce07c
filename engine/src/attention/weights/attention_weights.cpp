// AttentionWeights' range checks, shared by every variant's weights (attnscope/attention_weights.h).

#include <attnscope/attention_weights.h>

#include <stdexcept>
#include <string>

namespace attnscope::engine {
namespace {

void checkHead(int head, std::int64_t heads) {
    if (head < 0 || head >= heads)
        throw std::out_of_range("head " + std::to_string(head) + " is outside [0, " + std::to_string(heads) + ")");
}

void checkRange(const char* what, std::int64_t a, std::int64_t b, std::int64_t size) {
    if (a < 0 || b < a || b > size)
        throw std::out_of_range(std::string(what) + " [" + std::to_string(a) + ", " + std::to_string(b) +
                                ") is outside [0, " + std::to_string(size) + ")");
}

}  // namespace

WeightTile AttentionWeights::tile(int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1,
                                  bool withReasons) const {
    checkHead(head, m_heads);
    checkRange("rows", r0, r1, m_n);
    checkRange("keys", c0, c1, m_m);
    WeightTile out;
    out.head = head;
    out.r0 = r0;
    out.r1 = r1;
    out.c0 = c0;
    out.c1 = c1;
    const auto cells = static_cast<std::size_t>((r1 - r0) * (c1 - c0));
    out.weights.assign(cells, 0.0f);
    if (withReasons) {
        out.reasons.assign(cells, 0);
        out.multiplicity.assign(cells, 0);
    }
    if (cells > 0) fillTile(out);
    return out;
}

bool AttentionWeights::forEachRow(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const {
    checkHead(head, m_heads);
    checkRange("rows", r0, r1, m_n);
    if (r0 == r1) return true;
    return visitRows(head, r0, r1, visit);
}

std::int64_t AttentionWeights::entries(int head) const {
    std::int64_t total = 0;
    forEachRow(head, 0, m_n, [&](const RowEntries& row) {
        for (std::int64_t t = 0; t < row.count; ++t) total += row.multiplicity[t];
        return true;
    });
    return total;
}

float AttentionWeights::weightAt(int head, std::int64_t query, std::int64_t key) const {
    return tile(head, query, query + 1, key, key + 1).weights[0];
}

}  // namespace attnscope::engine
