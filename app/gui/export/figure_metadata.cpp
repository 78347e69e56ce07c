#include "gui/export/figure_metadata.h"

#include "views/data/param_text.h"
#include "views/compare/compare_view.h"
#include "views/heatmap/head_heatmap.h"
#include "views/heatmap/heads_grid.h"
#include "views/mask/mask_view.h"
#include "views/data/token_label.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>

namespace attnscope::app {

namespace {

const engine::AttentionResult* resultAt(const FigureSubject& s, int index) {
    if (!s.run || index < 0 || index >= static_cast<int>(s.run->results.size())) return nullptr;
    return &s.run->results[static_cast<std::size_t>(index)];
}

// "own attention of layer 3 (Mistral)", "Longformer on layer 3's Q/K", or the variant's name.
QString variantName(const FigureSubject& s, int index) { return views::resultName(*s.run, static_cast<std::size_t>(index), s.variantNames); }

QString paramText(const engine::AttentionResult& r) {
    QStringList params;
    for (const auto& [key, value] : r.params)
        params << views::paramAssignment(key, value);
    return params.join(QStringLiteral(", "));
}

QString appVersion() {
    const QString version = QCoreApplication::applicationVersion();
    return version.isEmpty() ? QStringLiteral("unknown") : version;
}

}  // namespace

FigureSubject FigureSubject::describe(QWidget* view, std::shared_ptr<const engine::RunResult> run, int resultIndex,
                                      int layer, int head, QHash<QString, QString> variantNames) {
    FigureSubject s;
    s.run = std::move(run);
    // `layer` counts the run's layers; a model's run names its own layer (the data is that layer's)
    s.layer = s.run && s.run->modelLayer >= 0 ? s.run->modelLayer + layer : layer;
    s.head = head;
    s.variantNames = std::move(variantNames);
    s.variantIndexes = {resultIndex};
    views::HeadHeatmap* heatmap = qobject_cast<views::HeadHeatmap*>(view);
    if (auto* compare = qobject_cast<views::CompareView*>(view)) {
        s.view = QStringLiteral("compare");
        s.variantIndexes.clear();
        for (int i = 0; i < compare->paneCount(); ++i)
            if (s.run && i < static_cast<int>(s.run->results.size())) s.variantIndexes.push_back(i);
        heatmap = compare->pane(0);
    } else if (qobject_cast<views::MaskView*>(view)) {
        s.view = QStringLiteral("mask");
        s.colormap = QStringLiteral("pattern_reasons");
    } else if (qobject_cast<views::HeadsGrid*>(view)) {
        s.view = QStringLiteral("all heads");
        s.head = -1;  // every head of the layer
    } else if (heatmap) {
        s.view = QStringLiteral("heatmap");
    } else {
        s.view = view ? view->objectName() : QString();
        if (s.view.isEmpty()) s.view = QStringLiteral("view");
    }
    if (heatmap) {
        s.colormap = heatmap->shownColormap();
        s.scale = heatmap->logScaleShown() ? QStringLiteral("log") : QStringLiteral("linear");
        s.poolFactor = heatmap->poolFactor();
        if (s.poolFactor > 1) s.pooling = views::poolModeName(heatmap->options().pooling);
        s.colorRange = heatmap->colorRange();
        if (heatmap->shownHead() >= 0) s.head = heatmap->shownHead();
    }
    return s;
}

QString FigureMetadata::title(const FigureSubject& s) {
    QStringList names;
    for (int index : s.variantIndexes)
        if (resultAt(s, index)) names << variantName(s, index);
    QString text = names.isEmpty() ? QCoreApplication::translate("FigureMetadata", "AttnScope")
                                   : names.join(QStringLiteral(" vs "));
    if (s.head >= 0) text += QCoreApplication::translate("FigureMetadata", " — head %1").arg(s.head);
    return text + QStringLiteral(" (%1)").arg(s.view);
}

QString FigureMetadata::caption(const FigureSubject& s) {
    QStringList parts;
    for (int index : s.variantIndexes) {
        const auto* r = resultAt(s, index);
        if (!r) continue;
        const QString params = paramText(*r);
        if (index == s.run->ownAttention) {  // what the model computes, in words, then how it was run
            parts << QCoreApplication::translate("FigureMetadata", "The model's own attention of layer %1 (%2: %3; computed as %4)")
                         .arg(s.run->modelLayer)
                         .arg(QString::fromStdString(s.run->modelFamilyName), QString::fromStdString(s.run->ownAttentionSummary),
                              QString::fromStdString(r->variantId));
            continue;
        }
        parts << QCoreApplication::translate("FigureMetadata", "Variant %1 (%2)")
                     .arg(QString::fromStdString(r->variantId),
                          params.isEmpty() ? QCoreApplication::translate("FigureMetadata", "no parameters") : params);
    }
    if (s.run) {
        parts << QCoreApplication::translate("FigureMetadata", "seed %1").arg(s.run->projection.seed);
        if (s.head < 0)  // the heads grid: every head at once
            parts << QCoreApplication::translate("FigureMetadata", "layer %1, all %2 heads").arg(s.layer).arg(s.run->heads);
        else if (const QString source = views::qkvSourceText(*s.run); !source.isEmpty())
            parts << source + QCoreApplication::translate("FigureMetadata", ", head %1 of %2").arg(s.head).arg(s.run->heads);
        else
            parts << QCoreApplication::translate("FigureMetadata", "layer %1, head %2 of %3").arg(s.layer).arg(s.head).arg(s.run->heads);
        const QString tokenizer = s.run->input.tokens.empty() ? QStringLiteral("positions")
                                                              : QString::fromLatin1(engine::tokenizerName(s.run->input.kind));
        parts << QCoreApplication::translate("FigureMetadata", "n = %1 (%2)").arg(s.run->n).arg(tokenizer);
    }
    if (!s.colormap.isEmpty()) {
        QString colours = QCoreApplication::translate("FigureMetadata", "colour map %1").arg(s.colormap);
        if (!s.scale.isEmpty()) colours += QCoreApplication::translate("FigureMetadata", ", %1 scale").arg(s.scale);
        if (s.poolFactor > 1)
            colours += QCoreApplication::translate("FigureMetadata", ", %1-pooled %2×%2").arg(s.pooling).arg(s.poolFactor);
        parts << colours;
    }
    parts << QCoreApplication::translate("FigureMetadata", "AttnScope %1").arg(appVersion());
    return parts.join(QStringLiteral(" · "));
}

QJsonObject FigureMetadata::sidecar(const FigureSubject& s) {
    QJsonObject out;
    out.insert(QStringLiteral("app"), QJsonObject{{QStringLiteral("name"), QStringLiteral("AttnScope")},
                                                  {QStringLiteral("version"), appVersion()}});
    out.insert(QStringLiteral("view"), s.view);
    out.insert(QStringLiteral("title"), title(s));
    out.insert(QStringLiteral("caption"), caption(s));
    if (s.run) {
        QJsonParseError error{};
        const QJsonDocument request = QJsonDocument::fromJson(QByteArray::fromStdString(s.run->requestJson), &error);
        if (error.error == QJsonParseError::NoError && request.isObject())
            out.insert(QStringLiteral("request"), request.object());
        else
            out.insert(QStringLiteral("request"), QString::fromStdString(s.run->requestJson));
        // Seeds are u64: a JSON double holds them exactly only up to 2^53, so large ones go as text.
        const std::uint64_t seed = s.run->projection.seed;
        if (seed <= (std::uint64_t{1} << 53))
            out.insert(QStringLiteral("seed"), static_cast<qint64>(seed));
        else
            out.insert(QStringLiteral("seed"), QString::number(seed));
        out.insert(QStringLiteral("n"), static_cast<qint64>(s.run->n));
        out.insert(QStringLiteral("tokenizer"), QString::fromLatin1(engine::tokenizerName(s.run->input.kind)));
        if (!s.run->modelFolder.empty())
            out.insert(QStringLiteral("model"), QJsonObject{{QStringLiteral("folder"), QString::fromStdString(s.run->modelFolder)},
                                                            {QStringLiteral("family"), QString::fromStdString(s.run->modelFamily)},
                                                            {QStringLiteral("layer"), s.run->modelLayer}});
    }
    QJsonArray variants;
    for (int index : s.variantIndexes) {
        const auto* r = resultAt(s, index);
        if (!r) continue;
        QJsonObject params;
        for (const auto& [key, value] : r->params)
            params.insert(QString::fromStdString(key), QString::fromStdString(engine::formatParamValue(value)));
        QJsonObject variant{{QStringLiteral("id"), QString::fromStdString(r->variantId)},
                            {QStringLiteral("name"), variantName(s, index)},
                            {QStringLiteral("params"), params}};
        if (index == s.run->ownAttention) {
            variant.insert(QStringLiteral("own_attention"), true);
            variant.insert(QStringLiteral("attention"), QString::fromStdString(s.run->ownAttentionSummary));
        }
        variants.append(variant);
    }
    out.insert(QStringLiteral("variants"), variants);
    if (!variants.isEmpty()) {
        out.insert(QStringLiteral("variant"), variants.first().toObject().value(QStringLiteral("id")));
        out.insert(QStringLiteral("params"), variants.first().toObject().value(QStringLiteral("params")));
    }
    out.insert(QStringLiteral("layer"), s.layer);
    out.insert(QStringLiteral("head"), s.head);
    out.insert(QStringLiteral("colormap"), s.colormap);
    out.insert(QStringLiteral("scale"), s.scale);
    out.insert(QStringLiteral("pooling"), s.pooling);
    out.insert(QStringLiteral("poolFactor"), s.poolFactor);
    out.insert(QStringLiteral("colorRange"), QJsonArray{s.colorRange.first, s.colorRange.second});
    return out;
}

}  // namespace attnscope::app
