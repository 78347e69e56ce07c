#include "views/heatmap/heatmap_title.h"

#include "views/data/param_text.h"
#include "views/data/token_label.h"

#include <attnscope/variant_catalog.h>

#include <QCoreApplication>
#include <QFontMetrics>

namespace attnscope::views {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("attnscope::views::HeadHeatmap", text); }

}  // namespace

HeatmapTitle heatmapTitle(const HeatmapTitleFacts& facts) {
    const engine::RunResult& run = *facts.run;
    const engine::AttentionResult& r = run.results[static_cast<std::size_t>(facts.resultIndex)];
    HeatmapTitle title;
    title.name = resultName(run, static_cast<std::size_t>(facts.resultIndex), facts.variantNames);
    QStringList params;
    if (facts.resultIndex == run.ownAttention) {
        // the layer's own attention: what it is in words, not the settings of its computation
        params << QString::fromStdString(run.ownAttentionSummary);
    } else {
        const engine::VariantInfo* info = engine::findVariantInfo(r.variantId);
        for (const auto& [key, value] : r.params) {
            const QString item = paramAssignment(key, value);
            params << item;
            const engine::ParamSpec* spec = info ? info->findParam(key) : nullptr;
            if (!spec || !(spec->defaultValue == value)) title.changed << item;
        }
    }
    QString text = tr("%1 — head %2 of %3 — n = %4 %5").arg(title.name).arg(facts.head).arg(r.heads).arg(r.n).arg(tokenUnit(run.input));
    if (const QString source = qkvSourceText(run); !source.isEmpty()) text += QStringLiteral(" — ") + source;
    const int f = facts.poolFactor;
    if (facts.zoomedRegion) text += tr(" — zoomed region at full resolution");
    else if (f > 1) text += (facts.poolMode == PoolMode::Mean ? tr(" — mean-pooled %1×%1") : tr(" — max-pooled %1×%1")).arg(f);
    if (!facts.weightsKept) text += tr(" — weights not kept");
    text += facts.poolingNote;
    // Parameters on a line of their own, so long lists do not set the window's minimum width.
    if (!params.isEmpty()) text += QLatin1Char('\n') + params.join(QStringLiteral(", "));
    title.text = text;
    return title;
}

QString compactHeatmapTitle(const QString& prefix, const HeatmapTitle& title, const std::string& variantId, const QFont& font,
                            int room) {
    const QFontMetrics metrics(font);
    const QString settings = title.changed.join(QStringLiteral(", "));
    QString compact;
    for (const QString& who : {title.name, QString::fromStdString(variantId)}) {
        compact = prefix + (settings.isEmpty() ? who : QStringLiteral("%1 (%2)").arg(who, settings));
        if (metrics.horizontalAdvance(compact) <= room) break;
    }
    return metrics.elidedText(compact, Qt::ElideRight, room);
}

}  // namespace attnscope::views
