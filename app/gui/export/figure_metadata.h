#pragma once
// What an exported figure shows, in words (title, caption) and as the JSON sidecar that lets
// anyone regenerate it (FORMATS.md §5 "Reproducibility sidecar").

#include <attnscope/types.h>

#include <QHash>
#include <QJsonObject>
#include <QString>

#include <memory>
#include <utility>
#include <vector>

class QWidget;

namespace attnscope::app {

/// The view being exported and the run behind it. Plain values: built on the GUI thread.
struct FigureSubject {
    QString view;  ///< "heatmap", "mask", "compare" or the tab's object name
    std::shared_ptr<const engine::RunResult> run;
    std::vector<int> variantIndexes;  ///< indexes into run->results that the view shows
    int layer = 0;
    int head = -1;
    QString colormap;  ///< drawn colour map ("viridis", "rdbu", "pattern_reasons", …)
    QString scale;     ///< "linear" | "log"; empty when the view has no colour scale
    QString pooling;   ///< "max" | "mean"; empty when nothing is pooled
    int poolFactor = 1;
    std::pair<double, double> colorRange{0.0, 0.0};
    QHash<QString, QString> variantNames;  ///< id -> display name

    /// Describes `view` (one of the main window's tabs): HeadHeatmap, CompareView, MaskView are
    /// known; other widgets get their object name and the selected variant.
    static FigureSubject describe(QWidget* view, std::shared_ptr<const engine::RunResult> run, int resultIndex,
                                  int layer, int head, QHash<QString, QString> variantNames);
};

class FigureMetadata {
public:
    /// "Longformer — head 2 (heatmap)"; "Full vs Longformer — head 2 (compare)".
    static QString title(const FigureSubject& subject);
    /// One paragraph naming variants with their parameters, the seed, layer/head, n, the colour
    /// map and scale, and the app version.
    static QString caption(const FigureSubject& subject);
    /// The sidecar without the file-specific fields (format, dpi, size), which the exporter adds:
    /// app, view, title, caption, request (RunResult::requestJson parsed; kept as text if it is
    /// not JSON), variants [{id, name, params}], variant, params, seed, layer, head, n, tokenizer,
    /// colormap, scale, pooling, poolFactor, colorRange.
    static QJsonObject sidecar(const FigureSubject& subject);
};

}  // namespace attnscope::app
