#include "views/heatmap/heatmap_cell_text.h"

#include <QCoreApplication>

#include <algorithm>

namespace attnscope::views {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("attnscope::views::HeadHeatmap", text); }

}  // namespace

QString heatmapCellText(const engine::AttentionResult& r, int head, const HeadMatrix& mx,
                        const std::function<QString(std::int64_t)>& tokenText, int query, int key) {
    const auto describe = [&](const QString& role, int index) {
        const QString token = tokenText(index);
        return token.isEmpty() ? QStringLiteral("%1 %2").arg(role).arg(index) : QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(token);
    };
    const QString cell = QStringLiteral("%1 → %2").arg(describe(tr("query"), query), describe(tr("key"), key));
    const int f = mx.poolFactor();
    const auto qi = static_cast<int>((query - mx.rowOffset()) / f), ki = static_cast<int>((key - mx.colOffset()) / f);
    const double w = mx.at(qi, ki);
    if (f == 1 && !mx.inPattern(qi, ki)) return tr("%1: not in the pattern").arg(cell);
    if (f == 1) return QStringLiteral("%1: weight %2").arg(cell, QString::number(w, 'f', 4));  // (one pass: tokens may hold "%1")
    // A pooled cell: the exact weight under the pointer, then what the cell draws for its block.
    const int q0 = query / f * f, k0 = key / f * f;
    const int q1 = std::min<int>(q0 + f, static_cast<int>(r.n)) - 1, k1 = std::min<int>(k0 + f, static_cast<int>(r.m)) - 1;
    QString exact;
    if (r.weights) {
        const engine::WeightTile tile = r.weights->tile(head, query, query + 1, key, key + 1, true);
        exact = tile.reasons[0] != 0 ? QStringLiteral("%1: weight %2\n").arg(cell, QString::number(tile.weights[0], 'g', 4))
                                     : tr("%1: not in the pattern\n").arg(cell);
    }
    return exact + (mx.poolMode() == PoolMode::Mean ? tr("queries %1–%2 → keys %3–%4: mean weight %5")
                                                     : tr("queries %1–%2 → keys %3–%4: max weight %5"))
                       .arg(q0)
                       .arg(q1)
                       .arg(k0)
                       .arg(k1)
                       .arg(w, 0, 'f', 4);
}

}  // namespace attnscope::views
