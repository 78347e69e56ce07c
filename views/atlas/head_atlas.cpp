#include "views/atlas/head_atlas.h"

#include "views/data/colormap.h"
#include "views/atlas/coverage_editor.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"
#include "views/atlas/rollout_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QString settingLabel(const engine::HeadAtlas& atlas, int setting) {
    if (setting < 0 || setting >= static_cast<int>(atlas.settings.size()))
        return QObject::tr("setting %1").arg(setting);
    const auto& s = atlas.settings[static_cast<std::size_t>(setting)];
    return QString::fromStdString(s.label.empty() ? s.variantId : s.label);
}

}  // namespace

// ---- AtlasMetric ------------------------------------------------------------------------------

std::vector<AtlasMetric> AtlasMetric::listFor(const engine::HeadAtlas& atlas) {
    using K = Kind;
    std::vector<AtlasMetric> list;
    for (K kind : {K::Entropy, K::MeanDistance, K::SelfShare, K::PreviousShare, K::NextShare, K::SpecialShare,
                   K::FirstShare, K::StreamingKept, K::WindowOnlyKept, K::Rank90})
        list.push_back(AtlasMetric{kind, -1});
    const std::int64_t kvHeads = atlas.model.kvHeads;
    if (kvHeads > 0 && kvHeads < atlas.heads) list.push_back(AtlasMetric{K::GroupSimilarity, -1});
    // (rows of a model without sinks sum to 1: their share is rounding)
    if (std::any_of(atlas.metrics.begin(), atlas.metrics.end(), [](const engine::HeadMetrics& m) { return m.sinkShare > 1e-4; }))
        list.push_back(AtlasMetric{K::SinkShare, -1});
    for (int s = 0; s < static_cast<int>(atlas.settings.size()); ++s) {
        list.push_back(AtlasMetric{K::KeptMass, s});
        list.push_back(AtlasMetric{K::OutputError, s});
    }
    return list;
}

double AtlasMetric::valueOf(const engine::HeadMetrics& head) const {
    const auto perSetting = [&](const std::vector<double>& values) {
        return setting >= 0 && setting < static_cast<int>(values.size()) ? values[static_cast<std::size_t>(setting)]
                                                                         : kNaN;
    };
    switch (kind) {
        case Kind::Entropy:
            return head.entropy;
        case Kind::MeanDistance:
            return head.meanDistance;
        case Kind::SelfShare:
            return head.selfShare;
        case Kind::PreviousShare:
            return head.previousShare;
        case Kind::NextShare:
            return head.nextShare;
        case Kind::SpecialShare:
            return head.specialShare;
        case Kind::FirstShare:
            return head.firstShare;
        case Kind::SinkShare:
            return head.sinkShare;
        case Kind::StreamingKept:
            return head.streamingKept;
        case Kind::WindowOnlyKept:
            return head.windowOnlyKept;
        case Kind::GroupSimilarity:
            return head.groupSimilarity;
        case Kind::Rank90:
            return static_cast<double>(head.rank90);
        case Kind::KeptMass:
            return perSetting(head.keptMass);
        case Kind::OutputError:
            return perSetting(head.outputError);
    }
    return kNaN;
}

QString AtlasMetric::name(const engine::HeadAtlas& atlas) const {
    switch (kind) {
        case Kind::Entropy:
            return QObject::tr("entropy (nats)");
        case Kind::MeanDistance:
            return QObject::tr("mean distance (tokens)");
        case Kind::SelfShare:
            return QObject::tr("self share");
        case Kind::PreviousShare:
            return QObject::tr("previous-token share");
        case Kind::NextShare:
            return QObject::tr("next-token share");
        case Kind::SpecialShare:
            return QObject::tr("special-token share");
        case Kind::FirstShare:
            return QObject::tr("first-token share");
        case Kind::SinkShare:
            return QObject::tr("learned-sink share");
        case Kind::StreamingKept:
            return QObject::tr("kept by %1 sinks + window %2").arg(atlas.streamingSinks).arg(atlas.streamingWindow);
        case Kind::WindowOnlyKept:
            return QObject::tr("kept by window %1 alone").arg(atlas.streamingWindow);
        case Kind::GroupSimilarity:
            return QObject::tr("similarity within its key/value group");
        case Kind::Rank90:
            return QObject::tr("rank at 90 %");
        case Kind::KeptMass:
            return QObject::tr("kept mass: %1").arg(settingLabel(atlas, setting));
        case Kind::OutputError:
            return QObject::tr("output error: %1").arg(settingLabel(atlas, setting));
    }
    return {};
}

QString AtlasMetric::definition() const {
    // docs/ATLAS.md, "Per-head metrics": every number is a mean over the head's n query rows.
    switch (kind) {
        case Kind::Entropy:
            return QObject::tr("Mean over queries i of −Σⱼ Pᵢⱼ ln Pᵢⱼ, in nats: 0 = one key, ln n = uniform.");
        case Kind::MeanDistance:
            return QObject::tr("Mean over queries i of Σⱼ Pᵢⱼ·|i − j|, in tokens.");
        case Kind::SelfShare:
            return QObject::tr("Mean of Pᵢᵢ: the mass a query puts on its own token.");
        case Kind::PreviousShare:
            return QObject::tr("Mean of Pᵢ,ᵢ₋₁ over i ≥ 1: the mass on the previous token.");
        case Kind::NextShare:
            return QObject::tr("Mean of Pᵢ,ᵢ₊₁ over i < n − 1: the mass on the next token.");
        case Kind::SpecialShare:
            return QObject::tr("Mean mass on template special tokens ([CLS], [SEP], <s>, </s>).");
        case Kind::FirstShare:
            return QObject::tr("Mean mass on token 0 (the “attention sink”).");
        case Kind::SinkShare:
            return QObject::tr("Mean over queries of the weight on the head's learned sink, 1 − Σⱼ Pᵢⱼ (GPT-OSS): "
                               "mass the head parks on no token at all.");
        case Kind::StreamingKept:
            return QObject::tr("StreamingLLM's cache: mean mass on the first 4 keys plus the keys within the window "
                               "(a quarter of the text) of the query. Compare with the window alone: the difference is "
                               "what the sinks hold.");
        case Kind::WindowOnlyKept:
            return QObject::tr("Mean mass on the keys within the window (a quarter of the text) of the query, "
                               "without the first 4: what a plain sliding window keeps.");
        case Kind::GroupSimilarity:
            return QObject::tr("Grouped-query attention: mean cosine similarity of this head's attention rows with "
                               "the other query heads reading the same key/value head (1 = identical patterns).");
        case Kind::Rank90:
            return QObject::tr("Number of singular values of P needed for 90 % of Σσ² (its spectral energy).");
        case Kind::KeptMass:
            return QObject::tr(
                "Share of the head's softmax mass on keys this variant's pattern lets the query reach "
                "(1 for dense approximations). Grey: not applicable at this n.");
        case Kind::OutputError:
            return QObject::tr(
                "‖O_variant − O_head‖_F / ‖O_head‖_F: the relative error if this variant replaced the "
                "head, on the same Q, K, V. Grey: not applicable at this n.");
    }
    return {};
}

bool AtlasMetric::isFraction() const {
    switch (kind) {
        case Kind::SelfShare:
        case Kind::PreviousShare:
        case Kind::NextShare:
        case Kind::SpecialShare:
        case Kind::FirstShare:
        case Kind::SinkShare:
        case Kind::StreamingKept:
        case Kind::WindowOnlyKept:
        case Kind::GroupSimilarity:
        case Kind::KeptMass:
            return true;
        default:
            return false;
    }
}

// ---- HeadAtlasView ----------------------------------------------------------------------------

HeadAtlasView::HeadAtlasView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    auto* toolbar = new QWidget(this);
    toolbar->setProperty("attnscopeExportSkip", true);  // FigurePainter::kSkipProperty: not in figures
    auto* row = new QHBoxLayout(toolbar);
    row->setContentsMargins(4, 2, 4, 2);
    row->addWidget(new QLabel(tr("Colour by"), toolbar));
    m_metricCombo = new QComboBox(toolbar);
    m_metricCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_metricCombo->setMinimumContentsLength(24);
    row->addWidget(m_metricCombo);
    m_analyze = new QPushButton(tr("Analyze"), toolbar);
    m_analyze->setToolTip(tr("Run the model on the input text and describe every head (background; Esc cancels)"));
    m_cancel = new QPushButton(tr("Cancel"), toolbar);
    m_cancel->setToolTip(tr("Stop the analysis (Esc)"));
    m_cancel->setEnabled(false);
    row->addWidget(m_analyze);
    row->addWidget(m_cancel);
    m_progress = new QProgressBar(toolbar);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    row->addWidget(m_progress);
    row->addStretch(1);
    auto* coverageToggle = new QToolButton(toolbar);
    coverageToggle->setText(tr("Coverage settings"));
    coverageToggle->setToolTip(tr("Show or hide the variants and parameters the atlas measures each head against"));
    coverageToggle->setCheckable(true);
    coverageToggle->setChecked(true);
    row->addWidget(coverageToggle);
    layout->addWidget(toolbar);
    m_coverage = new CoverageEditor(this);
    layout->addWidget(m_coverage);
    connect(coverageToggle, &QToolButton::toggled, m_coverage, &QWidget::setVisible);
    m_message = new QLabel(this);
    m_message->setTextFormat(Qt::PlainText);  // engine notices may quote file names and tokens
    m_message->setWordWrap(true);
    m_message->setProperty("attnscopeExportSkip", true);
    layout->addWidget(m_message);
    m_training = new QLabel(this);
    m_training->setObjectName(QStringLiteral("atlasTrainingRecord"));
    m_training->setTextFormat(Qt::PlainText);
    m_training->setWordWrap(true);
    m_training->setVisible(false);
    layout->addWidget(m_training);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    m_plot = new QCustomPlot(splitter);
    styleDiagnosticPlot(m_plot);
    // Every metric is sequential (magnitudes, not signed differences): viridis, NaN in grey.
    const TitledColorMap frame = addTitledViridisMap(m_plot, QString());
    m_title = frame.title;
    m_map = frame.map;
    m_scale = frame.scale;
    styleDiagnosticAxis(m_scale->axis(), m_plot->palette().color(QPalette::Text), m_plot->font());
    auto* margins = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_scale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_plot->xAxis->setLabel(tr("head"));
    m_plot->yAxis->setLabel(tr("layer"));
    m_plot->yAxis->setRangeReversed(true);  // layer 0 on top, as the heads grid
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // integer layers and heads only
        axis->setTicker(ticker);
        axis->setSubTicks(false);
        axis->grid()->setVisible(false);
    }
    m_marker = new QCPItemRect(m_plot);
    m_marker->setPen(QPen(QColor(255, 64, 64), 2.0));  // red stays visible on every viridis colour
    m_marker->setBrush(Qt::NoBrush);
    m_marker->setVisible(false);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &HeadAtlasView::onMouseMove);
    connect(m_plot, &QCustomPlot::mousePress, this, &HeadAtlasView::onMousePress);
    m_rollout = new RolloutView(splitter);
    splitter->addWidget(m_plot);
    splitter->addWidget(m_rollout);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({1, 1});  // proportions: the grid and the rollout share the width equally
    layout->addWidget(splitter, 1);

    connect(m_metricCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_metricCombo->setToolTip(metric().definition());
        rebuildGrid();
    });
    connect(m_analyze, &QPushButton::clicked, this, &HeadAtlasView::analyzeRequested);
    connect(m_cancel, &QPushButton::clicked, this, &HeadAtlasView::cancelRequested);
    setMessage(tr("Open a model (File ▸ Open Model…), then press Analyze."));
    rebuildGrid();
}

HeadAtlasView::~HeadAtlasView() = default;

void HeadAtlasView::setAtlas(std::shared_ptr<const engine::HeadAtlas> atlas) {
    const AtlasMetric previous = metric();
    m_atlas = std::move(atlas);
    m_metrics = m_atlas ? AtlasMetric::listFor(*m_atlas) : std::vector<AtlasMetric>{};
    {
        const QSignalBlocker block(m_metricCombo);
        m_metricCombo->clear();
        int keep = 0;
        for (int i = 0; i < metricCount(); ++i) {
            const AtlasMetric& m = m_metrics[static_cast<std::size_t>(i)];
            m_metricCombo->addItem(m.name(*m_atlas));
            m_metricCombo->setItemData(i, m.definition(), Qt::ToolTipRole);
            if (m.kind == previous.kind && m.setting == previous.setting) keep = i;
        }
        m_metricCombo->setCurrentIndex(metricCount() > 0 ? keep : -1);
    }
    m_metricCombo->setToolTip(metric().definition());
    if (m_selectedLayer >= layerCount() || m_selectedHead >= headCount()) m_selectedLayer = m_selectedHead = -1;
    if (m_atlas) {
        m_rollout->setMatrices(m_atlas->rollout, m_atlas->flow, m_atlas->input.tokens);
        m_coverage->showUsed(m_atlas->settings, m_atlas->n);
        QStringList notes;
        notes << tr("%1 tokens, %2 layers × %3 heads, %4 coverage settings, %5 s")
                     .arg(m_atlas->n)
                     .arg(m_atlas->layers)
                     .arg(m_atlas->heads)
                     .arg(m_atlas->settings.size())
                     .arg(m_atlas->seconds, 0, 'f', 2);
        for (const auto& notice : m_atlas->notices) notes << QString::fromStdString(notice);
        setMessage(notes.join(QStringLiteral(" — ")));
    } else {
        m_rollout->clear();
    }
    showTrainingRecord();
    rebuildGrid();
}

QString HeadAtlasView::trainingSummary(const engine::ModelInfo& model) {
    if (!model.training) return {};
    const engine::TrainingRecord& t = *model.training;
    QStringList parts;
    if (t.steps > 0) parts << tr("trained %1 steps%2").arg(t.steps).arg(t.task.empty() ? QString() : tr(" (%1)").arg(QString::fromStdString(t.task)));
    if (t.finalAccuracy)
        parts << (t.chanceAccuracy ? tr("held-out accuracy %1 (chance %2)").arg(*t.finalAccuracy, 0, 'f', 3).arg(*t.chanceAccuracy, 0, 'f', 3)
                                   : tr("held-out accuracy %1").arg(*t.finalAccuracy, 0, 'f', 3));
    if (t.finalLoss) parts << tr("loss %1").arg(*t.finalLoss, 0, 'f', 3);
    QString text = tr("This model was %1.").arg(parts.join(QStringLiteral(", ")));
    if (t.nearChance())
        text = tr("Near chance: this model has learned little, so its heads show initial weights more than "
                  "anything learned — train it longer before reading the atlas. ") + text;
    return text;
}

void HeadAtlasView::showTrainingRecord() {
    const QString text = m_atlas ? trainingSummary(m_atlas->model) : QString();
    m_training->setText(text);
    m_training->setVisible(!text.isEmpty());
    const bool warn = m_atlas && m_atlas->model.training && m_atlas->model.training->nearChance();
    m_training->setStyleSheet(warn ? QStringLiteral("color: #b00020; font-weight: bold") : QString());
}

int HeadAtlasView::metricIndex() const { return m_metricCombo->currentIndex(); }

void HeadAtlasView::setMetricIndex(int index) {
    if (index >= 0 && index < metricCount()) m_metricCombo->setCurrentIndex(index);
}

AtlasMetric HeadAtlasView::metric() const {
    const int i = metricIndex();
    return i >= 0 && i < metricCount() ? m_metrics[static_cast<std::size_t>(i)] : AtlasMetric{};
}

int HeadAtlasView::layerCount() const { return m_atlas ? static_cast<int>(m_atlas->layers) : 0; }
int HeadAtlasView::headCount() const { return m_atlas ? static_cast<int>(m_atlas->heads) : 0; }

void HeadAtlasView::rebuildGrid() {
    const int layers = layerCount(), heads = headCount();
    const bool complete = m_atlas && layers > 0 && heads > 0 &&
                          m_atlas->metrics.size() == static_cast<std::size_t>(layers) * static_cast<std::size_t>(heads);
    if (!complete) {
        m_map->data()->clear();
        m_map->setVisible(false);
        m_marker->setVisible(false);
        m_title->setText(m_atlas ? tr("Head atlas: the atlas has no heads")
                                 : tr("Head atlas: open a model and press Analyze to measure every head"));
        showEmptyPlot(m_plot, true);
        replotWhenShown(m_plot);
        return;
    }
    showEmptyPlot(m_plot, false);
    const AtlasMetric shown = metric();
    auto* data = m_map->data();
    data->setSize(heads, layers);
    data->setRange(QCPRange(0, heads - 1), QCPRange(0, layers - 1));
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& head : m_atlas->metrics) {
        const double v = shown.valueOf(head);
        data->setCell(head.head, head.layer, v);
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    QCPRange range(0, 1);
    if (!shown.isFraction() && std::isfinite(lo)) {
        // Errors, distances and entropies start at 0; a constant metric still gets a visible span.
        range = QCPRange(std::min(0.0, lo), hi > std::min(0.0, lo) ? hi : std::min(0.0, lo) + 1.0);
        if (shown.kind == AtlasMetric::Kind::Rank90) range = QCPRange(lo, hi > lo ? hi : lo + 1.0);
    }
    m_map->setDataRange(range);
    m_map->setVisible(true);
    m_scale->axis()->setLabel(shown.name(*m_atlas));
    m_plot->xAxis->setRange(-0.5, heads - 0.5);
    m_plot->yAxis->setRange(-0.5, layers - 0.5);
    labelLayerKinds();
    QString model = QString::fromStdString(m_atlas->model.arch);
    if (m_atlas->model.weightFormat == "GGUF") {  // quantized weights: the figures are the quantized model's
        QStringList types;
        for (const auto& [type, count] : m_atlas->model.weightTypes)
            if (type != "F32") types << QString::fromStdString(type);
        model += types.isEmpty() ? QStringLiteral(", GGUF") : QStringLiteral(", GGUF %1").arg(types.join(QLatin1Char('/')));
    }
    m_title->setText(tr("Head atlas%1\n%2")
                         .arg(model.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(model), shown.name(*m_atlas)));
    setSelectedHead(m_selectedLayer, m_selectedHead);
}

// A model mixing local (sliding-window) and global layers (Gemma, GPT-OSS) names each layer's kind
// beside its number, so the two kinds can be compared row against row; others keep plain numbers.
void HeadAtlasView::labelLayerKinds() {
    const std::vector<std::int64_t>& windows = m_atlas->model.layerWindows;
    const bool local = std::any_of(windows.begin(), windows.end(), [](std::int64_t w) { return w > 0; });
    const bool global = std::any_of(windows.begin(), windows.end(), [](std::int64_t w) { return w <= 0; });
    if (!local || !global || static_cast<int>(windows.size()) != layerCount()) {
        if (qSharedPointerDynamicCast<QCPAxisTickerText>(m_plot->yAxis->ticker())) {
            auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
            ticker->setTickStep(1.0);
            ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
            m_plot->yAxis->setTicker(ticker);
        }
        m_plot->yAxis->setLabel(tr("layer"));
        return;
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    std::int64_t window = 0;
    for (int l = 0; l < layerCount(); ++l) {
        const std::int64_t w = windows[static_cast<std::size_t>(l)];
        ticker->addTick(l, QStringLiteral("%1 %2").arg(l).arg(w > 0 ? QStringLiteral("L") : QStringLiteral("G")));
        window = std::max(window, w);
    }
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setLabel(tr("layer (L local: the last %1 keys; G global)").arg(window));
}

QStringList HeadAtlasView::layerTickLabels() const {
    const auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(m_plot->yAxis->ticker());
    return ticker ? QStringList(ticker->ticks().values()) : QStringList();
}

QString HeadAtlasView::layerAxisLabel() const { return m_plot->yAxis->label(); }

double HeadAtlasView::cellValue(int layer, int head) const {
    if (!m_map->visible() || layer < 0 || head < 0 || layer >= layerCount() || head >= headCount()) return kNaN;
    return m_map->data()->cell(head, layer);
}

QPoint HeadAtlasView::cellCenter(int layer, int head) const {
    if (layer < 0 || head < 0 || layer >= layerCount() || head >= headCount()) return {-1, -1};
    return QPoint(static_cast<int>(std::lround(m_plot->xAxis->coordToPixel(head))),
                  static_cast<int>(std::lround(m_plot->yAxis->coordToPixel(layer))));
}

QString HeadAtlasView::cellToolTip(int layer, int head) const {
    if (!m_atlas || layer < 0 || head < 0 || layer >= layerCount() || head >= headCount()) return {};
    const AtlasMetric shown = metric();
    const double v = cellValue(layer, head);
    const QString value = std::isfinite(v) ? QString::number(v, 'g', 4) : tr("not applicable");
    QString text = tr("Layer %1, head %2\n%3 = %4").arg(layer).arg(head).arg(shown.name(*m_atlas), value);
    if (shown.kind == AtlasMetric::Kind::KeptMass || shown.kind == AtlasMetric::Kind::OutputError) {
        const auto& notes = m_atlas->settingNotes;
        if (shown.setting >= 0 && shown.setting < static_cast<int>(notes.size()) &&
            !notes[static_cast<std::size_t>(shown.setting)].empty())
            text += tr(" (%1)").arg(QString::fromStdString(notes[static_cast<std::size_t>(shown.setting)]));
    }
    const auto& m = m_atlas->metrics[static_cast<std::size_t>(layer) * static_cast<std::size_t>(headCount()) +
                                     static_cast<std::size_t>(head)];
    text += tr("\nbest window %1 (keeps %2), best stride %3")
                .arg(m.bestWindow)
                .arg(m.bestWindowKept, 0, 'f', 3)
                .arg(m.bestStride);
    return text + QStringLiteral("\n\n") + shown.definition() +
           tr("\nClick: compare this head with the coverage variants.");
}

void HeadAtlasView::setSelectedHead(int layer, int head) {
    const bool valid = layer >= 0 && head >= 0 && layer < layerCount() && head < headCount();
    m_selectedLayer = valid ? layer : -1;
    m_selectedHead = valid ? head : -1;
    m_marker->setVisible(valid && m_map->visible());
    if (valid) {
        m_marker->topLeft->setCoords(head - 0.5, layer - 0.5);
        m_marker->bottomRight->setCoords(head + 0.5, layer + 0.5);
    }
    replotWhenShown(m_plot);
}

QString HeadAtlasView::message() const { return m_message->text(); }

void HeadAtlasView::setBusy(bool busy) {
    m_analyze->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_progress->setVisible(busy);
    if (busy) {
        m_progress->setValue(0);
        m_progress->setFormat(tr("starting %p%"));
    }
}

void HeadAtlasView::setProgress(int permille, const QString& stage) {
    m_progress->setValue(permille);
    m_progress->setFormat(tr("%1 %p%").arg(stage));
}

void HeadAtlasView::setMessage(const QString& text) { m_message->setText(text); }

bool HeadAtlasView::cellAt(const QPointF& pos, int* layer, int* head) const {
    if (!m_map->visible() || !m_plot->axisRect()->rect().contains(pos.toPoint())) return false;
    const int h = static_cast<int>(std::lround(m_plot->xAxis->pixelToCoord(pos.x())));
    const int l = static_cast<int>(std::lround(m_plot->yAxis->pixelToCoord(pos.y())));
    if (l < 0 || h < 0 || l >= layerCount() || h >= headCount()) return false;
    *layer = l;
    *head = h;
    return true;
}

void HeadAtlasView::onMouseMove(QMouseEvent* event) {
    int layer = 0, head = 0;
    if (!cellAt(event->position(), &layer, &head)) {
        QToolTip::hideText();
        return;
    }
    // Labels come from the model's files and settings: shown as plain text (FORMATS.md §5).
    QToolTip::showText(
        event->globalPosition().toPoint(),
        QStringLiteral("<p style='white-space:pre-wrap'>%1</p>")
            .arg(cellToolTip(layer, head).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))),
        m_plot);
}

void HeadAtlasView::onMousePress(QMouseEvent* event) {
    int layer = 0, head = 0;
    if (event->button() != Qt::LeftButton || !cellAt(event->position(), &layer, &head)) return;
    setSelectedHead(layer, head);
    Q_EMIT headSelected(layer, head);
}

}  // namespace attnscope::views
