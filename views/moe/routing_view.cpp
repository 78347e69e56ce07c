#include "views/moe/routing_view.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/moe/expert_layers_grid.h"
#include "views/moe/expert_report.h"
#include "views/widgets/qcp.h"
#include "views/widgets/scrolling_row.h"
#include "views/data/token_label.h"

#include <attnscope/moe_routing_file.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

constexpr int kMaxExperts = 64;
constexpr int kMaxCapacityHundredths = 400;  // capacity factor 4.00
constexpr int kDefaultCapacityHundredths = 125;  // the paper's 1.25

QString legendText() {
    return QObject::tr(
        "A router scores every token against every expert (logits = hidden · routerᵀ, softmax: the router "
        "probabilities) and sends it to its best expert (Switch: top-1; top-k: the k best, gates renormalised "
        "when asked). Each expert has room for capacity = ⌈k · tokens / E · capacity factor⌉ tokens; a token "
        "past that is dropped for that expert (struck through): its expert output is zero and the residual "
        "carries it on. The auxiliary loss E · Σ f·P is 1 when the load is balanced and grows as it is not; "
        "the z-loss keeps the logits small. For a text run the hidden states are the seeded random projections' "
        "token states and the router is drawn from the seed: the mechanics, not a trained model's choices. For a "
        "run on a Switch model's layer (Model settings) they are the model's own: its tokens entering that layer's "
        "FFN and its trained router.");
}

}  // namespace

MoeRoutingView::MoeRoutingView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(buildControls());
    m_source = new QLabel(this);
    m_source->setObjectName(QStringLiteral("moeSource"));
    m_source->setTextFormat(Qt::PlainText);
    m_source->setWordWrap(true);
    layout->addWidget(m_source);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("moeSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    layout->addWidget(buildPlots(), 1);

    auto* legend = new QLabel(legendText(), this);
    legend->setObjectName(QStringLiteral("moeLegend"));
    legend->setTextFormat(Qt::PlainText);
    legend->setWordWrap(true);
    layout->addWidget(legend);

    connect(m_experts, &QSpinBox::valueChanged, this, [this] {
        updateControls();
        rebuildLogits();
    });
    connect(m_policy, &QComboBox::currentIndexChanged, this, [this] {
        updateControls();
        reroute();
    });
    connect(m_k, &QSpinBox::valueChanged, this, &MoeRoutingView::reroute);
    connect(m_normalize, &QCheckBox::toggled, this, &MoeRoutingView::reroute);
    connect(m_capacity, &QSlider::valueChanged, this, [this] {
        m_modelCapacity = false;  // the user's factor from now on
        reroute();
    });
    connect(m_priority, &QComboBox::currentIndexChanged, this, &MoeRoutingView::reroute);
    connect(m_droppedAs, &QComboBox::currentIndexChanged, this, &MoeRoutingView::reroute);
    updateControls();
    clear();
}

// The router's settings in two rows, so the tab fits beside the settings column at 1366 px.
QWidget* MoeRoutingView::buildControls() {
    auto* router = new QHBoxLayout;
    auto* capacity = new QHBoxLayout;
    QHBoxLayout* controls = router;
    const auto addLabelled = [&](const QString& text, QWidget* field) {
        auto* label = new QLabel(text, this);
        label->setBuddy(field);
        controls->addWidget(label);
        controls->addWidget(field);
    };
    m_experts = new QSpinBox(this);
    m_experts->setObjectName(QStringLiteral("moeExperts"));
    m_experts->setRange(1, kMaxExperts);
    m_experts->setValue(kDefaultExperts);
    m_experts->setToolTip(tr("Experts E of the seeded router"));
    addLabelled(tr("&Experts"), m_experts);
    m_policy = new QComboBox(this);
    m_policy->addItem(tr("switch (top-1)"), QString::fromLatin1(engine::kSwitchPolicy));
    m_policy->addItem(tr("top-k"), QString::fromLatin1(engine::kTopkPolicy));
    addLabelled(tr("&Policy"), m_policy);
    m_k = new QSpinBox(this);
    m_k->setRange(1, kMaxExperts);
    m_k->setValue(2);
    m_k->setToolTip(tr("Experts per token (top-k)"));
    addLabelled(tr("&k"), m_k);
    m_normalize = new QCheckBox(tr("re&normalise gates"), this);
    m_normalize->setToolTip(tr("Top-k gates rescaled to sum 1 (Mixtral); off: the router probabilities (OLMoE)"));
    controls->addWidget(m_normalize);
    controls->addStretch(1);
    controls = capacity;
    m_capacity = new QSlider(Qt::Horizontal, this);
    m_capacity->setObjectName(QStringLiteral("moeCapacity"));
    m_capacity->setRange(0, kMaxCapacityHundredths);
    m_capacity->setSingleStep(5);
    m_capacity->setPageStep(25);
    m_capacity->setValue(kDefaultCapacityHundredths);
    m_capacity->setMinimumWidth(140);
    m_capacity->setToolTip(tr("Capacity factor (0: no capacity, dropless); arrow keys step by 0.05"));
    addLabelled(tr("&Capacity factor"), m_capacity);
    m_capacityLabel = new QLabel(this);
    m_capacityLabel->setMinimumWidth(60);
    controls->addWidget(m_capacityLabel);
    m_priority = new QComboBox(this);
    m_priority->addItem(tr("sequence"), QStringLiteral("sequence"));
    m_priority->addItem(tr("gate (batch priority)"), QStringLiteral("gate"));
    m_priority->setToolTip(tr("Who claims slots first: tokens in order (each token's first choice before any second), "
                              "or the highest gates first"));
    addLabelled(tr("P&riority"), m_priority);
    m_droppedAs = new QComboBox(this);
    m_droppedAs->addItem(tr("paper"), QStringLiteral("paper"));
    m_droppedAs->addItem(tr("expert 0 (Hugging Face)"), QStringLiteral("expert0"));
    m_droppedAs->setToolTip(tr("How the auxiliary loss counts a dropped choice: at its chosen expert (the paper, "
                               "mesh-TensorFlow) or as expert 0 (Hugging Face's Switch)"));
    addLabelled(tr("Loss counts &drops as"), m_droppedAs);
    controls->addStretch(1);
    auto* rows = new QWidget(this);
    auto* rowsLayout = new QVBoxLayout(rows);
    rowsLayout->setContentsMargins(0, 0, 0, 0);
    rowsLayout->addLayout(router);
    rowsLayout->addLayout(capacity);
    return scrollingRow(rows, this);

}

// The token strip above the router probabilities and the experts' load.
QWidget* MoeRoutingView::buildPlots() {
    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_strip = new QTextBrowser(splitter);
    m_strip->setObjectName(QStringLiteral("moeTokenStrip"));
    m_strip->setOpenLinks(false);
    m_strip->setMinimumHeight(80);
    auto* plots = new QWidget(splitter);
    auto* plotsLayout = new QHBoxLayout(plots);
    plotsLayout->setContentsMargins(0, 0, 0, 0);
    m_probPlot = new QCustomPlot(plots);
    styleDiagnosticPlot(m_probPlot);
    TitledColorMap parts = addTitledViridisMap(m_probPlot, tr("Router probabilities"));
    m_probMap = parts.map;
    parts.scale->axis()->setLabel(tr("p(expert | token)"));
    styleDiagnosticAxis(parts.scale->axis(), m_probPlot->palette().color(QPalette::Text), m_probPlot->font());
    m_probPlot->xAxis->setLabel(tr("expert"));
    m_probPlot->yAxis->setLabel(tr("token"));
    m_probPlot->yAxis->setRangeReversed(true);
    m_probPlot->setMinimumSize(220, 160);
    m_loadPlot = new QCustomPlot(plots);
    styleDiagnosticPlot(m_loadPlot);
    m_loadPlot->xAxis->setLabel(tr("expert"));
    m_loadPlot->yAxis->setLabel(tr("tokens"));
    placeLegendBelow(m_loadPlot, 2);  // inside the axes it hid the bars
    m_loadPlot->setMinimumSize(260, 160);
    plotsLayout->addWidget(m_probPlot, 2);
    plotsLayout->addWidget(m_loadPlot, 3);
    m_pages = new QTabWidget(splitter);
    m_pages->setObjectName(QStringLiteral("moePages"));
    m_pages->addTab(plots, tr("This layer"));
    auto* layersPage = new QWidget(m_pages);
    auto* layersLayout = new QVBoxLayout(layersPage);
    layersLayout->setContentsMargins(0, 2, 0, 0);
    auto* caption = new QLabel(tr("A row per expert layer, a column per token: the colour is the expert, paler means a "
                                  "lower gate, grey means dropped. Hover a cell for the token and its gate."),
                               layersPage);
    caption->setWordWrap(true);
    layersLayout->addWidget(caption);
    auto* layers = new QSplitter(Qt::Vertical, layersPage);
    layersLayout->addWidget(layers, 1);
    m_layersGrid = new ExpertLayersGrid(layers);
    m_layersReport = new QTextBrowser(layers);
    m_layersReport->setObjectName(QStringLiteral("moeLayersReport"));
    layers->addWidget(m_layersGrid);
    layers->addWidget(m_layersReport);
    layers->setStretchFactor(1, 1);
    m_pages->addTab(layersPage, tr("All layers"));
    m_pages->setTabToolTip(1, tr("A Switch model's every expert layer: which expert each token goes to, what each expert "
                                 "takes, and the load per layer. Run on a model's expert layer to fill it."));
    m_pages->setTabEnabled(1, false);
    splitter->addWidget(m_strip);
    splitter->addWidget(m_pages);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    return splitter;

}

engine::RouterOptions MoeRoutingView::options(int layer) const {
    engine::RouterOptions o;
    if (showsModelRouter()) {  // (DeepSeek's rules have no controls: the model's own)
        const engine::ModelRouting& m = m_modelRouter;
        const auto l = static_cast<std::size_t>(layer >= 0 ? layer : m_modelLayer);
        o.scoring = m.scoring;
        o.choiceBias = l < m.layerChoiceBias.size() ? m.layerChoiceBias[l] : std::vector<float>{};
        o.expertGroups = m.expertGroups;
        o.keptGroups = m.keptGroups;
        o.groupScore = m.groupScore;
        o.gateScale = m.gateScale;
    }
    o.policy = m_policy->currentData().toString().toStdString();
    o.k = o.policy == engine::kTopkPolicy ? m_k->value() : 1;
    o.normalize = m_normalize->isChecked();
    o.capacityFactor = m_capacity->value() / 100.0;
    if (m_modelCapacity) o.expertCapacity = m_modelExpertCapacity;
    o.priority = m_priority->currentData().toString().toStdString();
    o.droppedAs = m_droppedAs->currentData().toString().toStdString();
    return o;
}

QString MoeRoutingView::message() const { return m_summary->text(); }
QString MoeRoutingView::stripHtml() const { return m_strip->toHtml(); }

void MoeRoutingView::updateControls() {
    const bool topk = m_policy->currentData().toString() == QLatin1String(engine::kTopkPolicy);
    m_k->setEnabled(topk);
    m_normalize->setEnabled(topk);
    m_k->setMaximum(m_experts->value());
    const double factor = m_capacity->value() / 100.0;
    m_capacityLabel->setText(m_modelCapacity && m_modelExpertCapacity > 0 ? tr("the model's %1 slots").arg(m_modelExpertCapacity)
                             : factor == 0                                  ? tr("dropless")
                                                                            : QString::number(factor, 'f', 2));
}

void MoeRoutingView::clear() {
    useSeededRouter();
    m_input = {};
    m_logits = {};
    m_routing.reset();
    m_summary->setText(tr("No tokens yet: press Run (F5). The Experts tab routes the run's tokens."));
    m_strip->clear();
    m_probMap->data()->clear();
    m_loadPlot->clearPlottables();
    m_loadPlot->clearItems();
    replotWhenShown(m_probPlot);
    replotWhenShown(m_loadPlot);
}

void MoeRoutingView::setTokens(const engine::TokenizedInput& input, std::uint64_t seed) {
    if (input.tokens.empty()) return clear();
    useSeededRouter();
    m_input = input;
    m_seed = seed;
    m_source->setText(tr("Router: seeded random (seed %1) over the run's token states.").arg(seed));
    rebuildLogits();
}

void MoeRoutingView::useSeededRouter() {
    m_modelLayer = -1;
    m_modelLogits = {};
    m_modelLayerLogits.clear();
    m_layersGrid->clear();
    m_layersReport->clear();
    if (m_pages->currentIndex() == 1) m_pages->setCurrentIndex(0);
    m_pages->setTabEnabled(1, false);
    m_modelCapacity = false;
    m_experts->setEnabled(true);
}

void MoeRoutingView::setModelRouting(const engine::TokenizedInput& input, const engine::ModelRouting& routing, int layer) {
    if (input.tokens.empty() || routing.logits.shape.size() != 2) return clear();
    m_input = input;
    m_modelLayer = layer;
    m_modelLogits = routing.logits;
    m_modelLayerLogits = routing.layerLogits;
    m_modelRouter = routing;
    m_modelRouter.logits = {};
    m_modelRouter.layerLogits.clear();
    m_pages->setTabEnabled(1, true);
    m_modelExpertCapacity = routing.expertCapacity;
    m_modelCapacity = true;
    const auto experts = static_cast<int>(routing.logits.shape[1]);
    {
        const QSignalBlocker blockExperts(m_experts), blockCapacity(m_capacity), blockPolicy(m_policy), blockK(m_k),
            blockNormalize(m_normalize);
        m_experts->setMaximum(std::max(kMaxExperts, experts));
        m_experts->setValue(experts);
        // the model's router: Switch top-1, or Mixtral's top-k renormalised
        m_policy->setCurrentIndex(m_policy->findData(QString::fromLatin1(routing.k > 1 ? engine::kTopkPolicy : engine::kSwitchPolicy)));
        m_k->setMaximum(experts);
        if (routing.k > 1) m_k->setValue(static_cast<int>(routing.k));
        m_normalize->setChecked(routing.normalize);
        m_capacity->setValue(static_cast<int>(std::lround(routing.capacityFactor * 100)));
    }
    m_experts->setEnabled(false);  // the model's router has its own experts
    const QString capacity = routing.expertCapacity > 0 ? tr("%1 slots per expert").arg(routing.expertCapacity)
                             : routing.capacityFactor > 0 ? tr("capacity factor %1").arg(routing.capacityFactor, 0, 'f', 2)
                                                          : tr("no capacity (dropless)");
    const QString choices = routing.k > 1 ? tr("top-%1%2, ").arg(routing.k).arg(routing.normalize ? tr(" renormalised") : QString())
                                          : tr("top-1, ");
    QString rules;
    if (routing.scoring == "sigmoid") rules += tr(" Scores σ(logit) each%1.").arg(routing.layerChoiceBias.empty() ? QString() : tr(", chosen with the correction bias added"));
    if (routing.expertGroups > 1)
        rules += tr(" Only the best %1 of %2 expert groups compete.").arg(routing.keptGroups).arg(routing.expertGroups);
    if (routing.gateScale != 1.0) rules += tr(" Gates × %1.").arg(routing.gateScale, 0, 'g', 4);
    m_source->setText(tr("Router: the model's layer %1 (%2 experts, %3%4): its tokens entering the layer's FFN.%5")
                          .arg(layer)
                          .arg(experts)
                          .arg(choices, capacity, rules));
    rebuildLogits();
}

void MoeRoutingView::rebuildLogits() {
    if (m_input.tokens.empty()) return;
    if (showsModelRouter()) {
        m_logits = m_modelLogits;
        return reroute();
    }
    // as `attnscope-cli route --text`: the same states and router for the same seed
    auto logits = engine::routerLogits(engine::randomTokenStates(m_input, kStateDim, m_seed),
                                       engine::randomRouter(m_experts->value(), kStateDim, m_seed));
    if (!logits) {
        m_routing.reset();
        m_summary->setText(QString::fromStdString(logits.error().message));
        return;
    }
    m_logits = std::move(logits.value());
    reroute();
}

void MoeRoutingView::reroute() {
    updateControls();
    if (m_logits.f32.empty()) return;
    auto routed = engine::routeTokens(m_logits, options());
    if (!routed) {
        m_routing.reset();
        m_summary->setText(QString::fromStdString(routed.error().message));
        return;
    }
    m_routing = std::move(routed.value());
    const engine::Routing& r = *m_routing;
    const long long choices = r.n * r.k;
    QString text = r.capacity > 0 ? tr("Capacity %1 tokens per expert. ").arg(r.capacity) : tr("No capacity (dropless). ");
    text += tr("Dropped %1 of %2 choices (%3 %). Auxiliary loss %4 (1 = balanced), z-loss %5.")
                .arg(r.dropped)
                .arg(choices)
                .arg(choices > 0 ? 100.0 * static_cast<double>(r.dropped) / static_cast<double>(choices) : 0.0, 0, 'f', 1)
                .arg(r.auxLoss, 0, 'f', 3)
                .arg(r.zLoss, 0, 'f', 3);
    long long dead = 0;
    for (auto count : r.expertCounts) dead += count == 0 ? 1 : 0;
    if (dead > 0) text += tr(" %1 expert(s) receive no token.").arg(dead);
    m_summary->setText(text);
    drawStrip();
    drawProbabilities();
    drawLoad();
    drawModelLayers();
}

// Every expert layer of the model routed with the same options (O(layers · n · E)).
void MoeRoutingView::drawModelLayers() {
    if (!showsModelRouter()) return;
    std::vector<std::pair<int, engine::Routing>> layers;
    for (std::size_t l = 0; l < m_modelLayerLogits.size(); ++l) {
        if (m_modelLayerLogits[l].shape.size() != 2) continue;
        auto routed = engine::routeTokens(m_modelLayerLogits[l], options(static_cast<int>(l)));
        if (routed) layers.emplace_back(static_cast<int>(l), std::move(routed.value()));
    }
    m_layersReport->setHtml(expertReportHtml(layers, m_modelLayer, m_input));
    m_layersGrid->setRoutings(std::move(layers), m_input);
}

QString MoeRoutingView::layersReportHtml() const { return m_layersReport->toHtml(); }

void MoeRoutingView::drawStrip() {
    const engine::Routing& r = *m_routing;
    const CategoricalPalette& palette = CategoricalPalette::standard();
    QString html = QStringLiteral("<div style='line-height:160%'>");
    const int shown = static_cast<int>(std::min<std::int64_t>(r.n, kMaxStripTokens));
    std::int64_t previousEnd = m_input.tokens.empty() ? 0 : m_input.tokens.front().byteBegin;
    for (int t = 0; t < shown; ++t) {
        const engine::Token& token = m_input.tokens[static_cast<std::size_t>(t)];
        if (token.byteBegin > previousEnd && token.byteBegin <= static_cast<std::int64_t>(m_input.text.size())) {
            const std::string gap = m_input.text.substr(static_cast<std::size_t>(previousEnd), static_cast<std::size_t>(token.byteBegin - previousEnd));
            // text between tokens (spaces, or what a model's truncation left out) in grey: not routed
            html += QStringLiteral("<span style='color:#888888'>%1</span>")
                        .arg(QString::fromUtf8(gap.data(), static_cast<qsizetype>(gap.size()))
                                 .toHtmlEscaped()
                                 .replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        }
        previousEnd = std::max(previousEnd, token.byteEnd);
        const std::size_t first = static_cast<std::size_t>(t) * static_cast<std::size_t>(r.k);
        const auto expert = r.expert[first];
        const double gate = r.gate[first];
        const bool kept = r.kept[first] != 0;
        QColor colour = palette.color(expert);
        colour.setAlphaF(static_cast<float>(0.25 + 0.75 * std::clamp(gate, 0.0, 1.0)));
        QStringList choices;
        for (std::int64_t c = 0; c < r.k; ++c)
            choices << tr("expert %1, gate %2, slot %3%4")
                           .arg(r.expert[first + static_cast<std::size_t>(c)])
                           .arg(r.gate[first + static_cast<std::size_t>(c)], 0, 'f', 3)
                           .arg(r.position[first + static_cast<std::size_t>(c)])
                           .arg(r.kept[first + static_cast<std::size_t>(c)] ? QString() : tr(" (dropped)"));
        const QString label = tokenLabel(token.text, 40).toHtmlEscaped();
        html += QStringLiteral("<span title='%1' style='background-color:rgba(%2,%3,%4,%5);%6'>%7</span>")
                    .arg(tr("token %1: %2").arg(t).arg(choices.join(QStringLiteral("; "))).toHtmlEscaped())
                    .arg(colour.red())
                    .arg(colour.green())
                    .arg(colour.blue())
                    .arg(colour.alphaF(), 0, 'f', 2)
                    .arg(kept ? QString() : QStringLiteral("text-decoration:line-through;"))
                    .arg(label);
    }
    if (shown < r.n) html += tr(" … (the first %1 of %2 tokens)").arg(shown).arg(r.n).toHtmlEscaped();
    html += QStringLiteral("</div>");
    m_strip->setHtml(html);
}

void MoeRoutingView::drawProbabilities() {
    const engine::Routing& r = *m_routing;
    const int experts = static_cast<int>(r.experts), rows = static_cast<int>(r.n);
    m_probMap->data()->setSize(experts, rows);
    m_probMap->data()->setRange(QCPRange(0, experts - 1), QCPRange(0, rows - 1));
    for (int t = 0; t < rows; ++t)
        for (int e = 0; e < experts; ++e)
            m_probMap->data()->setCell(e, t, r.probs[static_cast<std::size_t>(t) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)]);
    m_probMap->setDataRange(QCPRange(0, 1));
    m_probPlot->xAxis->setRange(-0.5, experts - 0.5);
    m_probPlot->yAxis->setRange(-0.5, rows - 0.5);
    replotWhenShown(m_probPlot);
}

void MoeRoutingView::drawLoad() {
    const engine::Routing& r = *m_routing;
    m_loadPlot->clearPlottables();
    m_loadPlot->clearItems();
    const CategoricalPalette& palette = CategoricalPalette::standard();
    QVector<double> x, assigned, kept;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double top = 1;
    for (std::int64_t e = 0; e < r.experts; ++e) {
        x << static_cast<double>(e);
        assigned << static_cast<double>(r.expertCounts[static_cast<std::size_t>(e)]);
        kept << static_cast<double>(r.keptCounts[static_cast<std::size_t>(e)]);
        top = std::max(top, assigned.back());
        ticker->addTick(static_cast<double>(e), r.expertCounts[static_cast<std::size_t>(e)] == 0 ? tr("%1 (dead)").arg(e) : QString::number(e));
    }
    auto* assignedBars = new QCPBars(m_loadPlot->xAxis, m_loadPlot->yAxis);
    assignedBars->setName(tr("assigned (before capacity)"));
    assignedBars->setData(x, assigned, true);
    assignedBars->setWidth(0.8);
    assignedBars->setPen(QPen(palette.color(0).darker(130)));
    assignedBars->setBrush(QColor(palette.color(0).red(), palette.color(0).green(), palette.color(0).blue(), 60));
    auto* keptBars = new QCPBars(m_loadPlot->xAxis, m_loadPlot->yAxis);
    keptBars->setName(tr("kept"));
    keptBars->setData(x, kept, true);
    keptBars->setWidth(0.5);
    keptBars->setPen(Qt::NoPen);
    keptBars->setBrush(palette.color(0));
    const QColor fg = m_loadPlot->palette().color(QPalette::Text);
    // the capacity (per group; one group unless the options set a group size) and the ideal load
    const double ideal = static_cast<double>(r.n * r.k) / static_cast<double>(r.experts);
    const auto horizontal = [&](double y, const QPen& pen, const QString& name) {
        auto* line = new QCPGraph(m_loadPlot->xAxis, m_loadPlot->yAxis);
        line->setName(name);
        line->setPen(pen);
        line->setData(QVector<double>{-0.5, static_cast<double>(r.experts) - 0.5}, QVector<double>{y, y});
    };
    if (r.capacity > 0) {
        horizontal(static_cast<double>(r.capacity * r.groups), QPen(QColor(0xb0, 0x00, 0x20), 2), tr("capacity %1").arg(r.capacity * r.groups));
        top = std::max(top, static_cast<double>(r.capacity * r.groups));
    }
    horizontal(ideal, QPen(fg, 1.5, Qt::DashLine), tr("balanced load %1").arg(ideal, 0, 'f', 1));
    m_loadPlot->xAxis->setTicker(ticker);
    m_loadPlot->xAxis->setRange(-0.5, static_cast<double>(r.experts) - 0.5);
    m_loadPlot->yAxis->setRange(0, top * 1.7);  // room for the legend above the bars
    replotWhenShown(m_loadPlot);
}

QString MoeRoutingView::exportRouting(const QString& path) const {
    if (!m_routing) return tr("Nothing to export yet: run the text first (the Experts tab routes its tokens).");
    const std::string file = path.toStdString();
    const bool csv = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive);
    const auto written = csv ? engine::writeRoutingCsv(file, *m_routing, &m_input)
                             : engine::writeRoutingFile(file, *m_routing, options().droppedAs);
    return written ? QString() : QString::fromStdString(written.error().message);
}

void MoeRoutingView::setResult(Run result) {
    if (result && result->modelRouting)
        setModelRouting(result->input, *result->modelRouting, result->modelLayer);
    else if (result)
        setTokens(result->input, result->projection.seed);
    else
        clear();
}

}  // namespace attnscope::views
