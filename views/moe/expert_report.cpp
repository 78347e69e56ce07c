#include "views/moe/expert_report.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/data/token_label.h"

#include <attnscope/moe_expert_stats.h>

#include <QCoreApplication>

namespace attnscope::views {
namespace {

constexpr int kTopTokens = 8;

QString tr(const char* text) { return QCoreApplication::translate("ExpertReport", text); }

QString swatch(long long expert) {
    const QColor c = CategoricalPalette::standard().color(expert);
    return QStringLiteral("<span style='background-color:%1'>&nbsp;&nbsp;&nbsp;</span> %2").arg(c.name()).arg(expert);
}

QString specialisation(const engine::Routing& r, int layer, const engine::TokenizedInput& input) {
    QString html = QStringLiteral("<h4>%1</h4><table cellpadding='2'>").arg(tr("Tokens each expert of layer %1 takes most").arg(layer));
    const auto lists = engine::tokensPerExpert(r, input, kTopTokens);
    for (std::size_t e = 0; e < lists.size(); ++e) {
        QStringList items;
        for (const auto& item : lists[e])
            items << QStringLiteral("%1 ×%2").arg(tokenLabel(item.token, 16).toHtmlEscaped()).arg(item.count);
        html += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                    .arg(swatch(static_cast<long long>(e)), items.isEmpty() ? tr("<i>no token (dead)</i>") : items.join(QStringLiteral(", ")));
    }
    return html + QStringLiteral("</table>");
}

QString loadPerLayer(const std::vector<std::pair<int, engine::Routing>>& layers) {
    const std::int64_t experts = layers.front().second.experts;
    QString html = QStringLiteral("<h4>%1</h4><table cellpadding='2' border='0'><tr><th>%2</th>")
                       .arg(tr("Load per layer: kept / assigned (ideal %1 each)")
                                .arg(static_cast<double>(layers.front().second.n * layers.front().second.k) / static_cast<double>(experts), 0, 'f', 1),
                            tr("layer"));
    for (std::int64_t e = 0; e < experts; ++e) html += QStringLiteral("<th>%1</th>").arg(swatch(e));
    html += QStringLiteral("<th>%1</th></tr>").arg(tr("dropped"));
    for (const auto& [layer, r] : layers) {
        html += QStringLiteral("<tr><td align='right'>L%1</td>").arg(layer);
        for (std::int64_t e = 0; e < r.experts; ++e) {
            const auto assigned = r.expertCounts[static_cast<std::size_t>(e)], kept = r.keptCounts[static_cast<std::size_t>(e)];
            html += assigned == 0 ? QStringLiteral("<td align='right'><b>%1</b></td>").arg(tr("dead"))
                                  : QStringLiteral("<td align='right'>%1 / %2</td>").arg(kept).arg(assigned);
        }
        html += QStringLiteral("<td align='right'>%1</td></tr>").arg(r.dropped);
    }
    return html + QStringLiteral("</table>");
}

QString coactivation(const engine::Routing& r, int layer) {
    if (r.k < 2) return tr("<p>Co-activation: with top-1 routing each token has one expert; choose top-k (k ≥ 2) to see "
                           "which experts the same tokens choose together.</p>");
    const auto counts = engine::expertCoactivation(r);
    QString html = QStringLiteral("<h4>%1</h4><table cellpadding='2'><tr><th></th>")
                       .arg(tr("Co-activation in layer %1: tokens choosing both").arg(layer));
    for (std::int64_t e = 0; e < r.experts; ++e) html += QStringLiteral("<th>%1</th>").arg(swatch(e));
    html += QStringLiteral("</tr>");
    for (std::int64_t i = 0; i < r.experts; ++i) {
        html += QStringLiteral("<tr><th>%1</th>").arg(swatch(i));
        for (std::int64_t j = 0; j < r.experts; ++j)
            html += QStringLiteral("<td align='right'>%1</td>").arg(counts[static_cast<std::size_t>(i * r.experts + j)]);
        html += QStringLiteral("</tr>");
    }
    return html + QStringLiteral("</table>");
}

}  // namespace

QString expertReportHtml(const std::vector<std::pair<int, engine::Routing>>& layers, int selected,
                         const engine::TokenizedInput& input) {
    if (layers.empty()) return {};
    const auto* chosen = &layers.front();
    for (const auto& entry : layers)
        if (entry.first == selected) chosen = &entry;
    return specialisation(chosen->second, chosen->first, input) + loadPerLayer(layers) + coactivation(chosen->second, chosen->first);
}

}  // namespace attnscope::views
