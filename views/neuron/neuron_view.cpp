#include "views/neuron/neuron_view.h"

#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/data/token_label.h"

#include <attnscope/variant_catalog.h>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope::views {

NeuronView::NeuronView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(9, 6, 9, 0);
    controls->addWidget(new QLabel(tr("Query"), this));
    m_query = new QSpinBox(this);
    m_query->setRange(0, 0);
    m_query->setToolTip(tr("The query token whose row is explained (hovering the heatmap or Links picks it too)"));
    controls->addWidget(m_query);
    m_beforeRotation = new QCheckBox(tr("Before rotation"), this);
    m_beforeRotation->setToolTip(tr("A rotary layer turns q and k by their positions before the dot product: show the cells "
                                    "with the turn undone (what the head scores with positions removed); the weights stay the model's"));
    m_beforeRotation->hide();
    controls->addWidget(m_beforeRotation);
    controls->addStretch(1);
    layout->addLayout(controls);
    m_info = addExplanationLabel(this, layout);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->setMinimumHeight(320);
    QFont titleFont = m_plot->font();
    titleFont.setBold(true);
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_title->setTextColor(m_plot->palette().color(QPalette::Text));
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_plot->xAxis->setLabel(tr("dimension c of q and k"));
    QSharedPointer<QCPAxisTickerFixed> wholeDimensions(new QCPAxisTickerFixed);  // (no "dimension 2.5")
    wholeDimensions->setTickStep(1);
    wholeDimensions->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->xAxis->setTicker(wholeDimensions);
    m_plot->yAxis->setRangeReversed(true);  // (the strongest key on top)
    // beside the rows, on their own axes sharing the rows: each score's parts, then the weight
    m_scoreRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(1, 2, m_scoreRect);
    for (QCPAxis* axis : m_scoreRect->axes()) styleDiagnosticAxis(axis, m_plot->palette().color(QPalette::Text), m_plot->font());
    m_scoreRect->axis(QCPAxis::atLeft)->setRangeReversed(true);
    m_scoreRect->axis(QCPAxis::atLeft)->setTickLabels(false);
    m_scoreRect->axis(QCPAxis::atBottom)->setLabel(tr("score = scaled q·k + terms"));
    auto* scoreGroup = new QCPBarsGroup(m_plot);
    m_dotBars = new QCPBars(m_scoreRect->axis(QCPAxis::atLeft), m_scoreRect->axis(QCPAxis::atBottom));
    m_termBars = new QCPBars(m_scoreRect->axis(QCPAxis::atLeft), m_scoreRect->axis(QCPAxis::atBottom));
    for (QCPBars* bars : {m_dotBars, m_termBars}) {
        bars->setWidth(0.38);
        bars->setPen(Qt::NoPen);
        bars->setBarsGroup(scoreGroup);
    }
    m_dotBars->setBrush(QColor(120, 120, 120));
    m_termBars->setBrush(QColor(230, 120, 20));  // (a model's relative bias, Transformer-XL's terms)
    m_barRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(1, 3, m_barRect);
    m_plot->plotLayout()->setColumnStretchFactor(0, 4);
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.01);
    m_plot->plotLayout()->setColumnStretchFactor(2, 1);
    m_plot->plotLayout()->setColumnStretchFactor(3, 1);
    for (QCPAxis* axis : m_barRect->axes()) styleDiagnosticAxis(axis, m_plot->palette().color(QPalette::Text), m_plot->font());
    m_barRect->axis(QCPAxis::atLeft)->setRangeReversed(true);
    m_barRect->axis(QCPAxis::atLeft)->setTickLabels(false);
    m_barRect->axis(QCPAxis::atBottom)->setLabel(tr("weight (%)"));
    m_bars = new QCPBars(m_barRect->axis(QCPAxis::atLeft), m_barRect->axis(QCPAxis::atBottom));
    m_bars->setWidth(0.7);
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(QColor(31, 119, 180));
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(1, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setBarWidth(12);
    m_scale->axis()->setLabel(tr("q_c · k_c"));
    m_map->setColorScale(m_scale);
    m_scale->setGradient(gradientFromLut(divergingColormap()));
    m_map->setGradient(m_scale->gradient());
    layout->addWidget(m_plot, 1);
    connect(m_query, &QSpinBox::valueChanged, this, [this] { rebuild(); });
    connect(m_beforeRotation, &QCheckBox::toggled, this, [this] { showTerms(); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &NeuronView::hover);
    rebuild();
}

NeuronView::~NeuronView() = default;

void NeuronView::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
    if (m_state)
        connect(m_state, &InspectionState::hoveredChanged, this, [this](int query, int) {
            if (query >= 0 && query != m_query->value() && query <= m_query->maximum()) setQuery(query);
        });
}

void NeuronView::setResult(Run result) {
    m_result = std::move(result);
    const engine::AttentionResult* r = m_result && !m_result->results.empty() ? &m_result->results.front() : nullptr;
    const QSignalBlocker quiet(m_query);
    m_query->setRange(0, r ? static_cast<int>(std::max<std::int64_t>(r->n - 1, 0)) : 0);
    rebuild();
}

void NeuronView::setQuery(int query) { m_query->setValue(std::clamp(query, 0, m_query->maximum())); }

int NeuronView::query() const { return m_query->value(); }

QString NeuronView::explanation() const { return m_info->text(); }

QString NeuronView::keyLabel(std::int64_t key) const {
    if (m_result && key < static_cast<std::int64_t>(m_result->input.tokens.size()))
        return QStringLiteral("‘%1’ %2").arg(tokenLabel(m_result->input.tokens[static_cast<std::size_t>(key)].text)).arg(key);
    return tr("key %1").arg(key);
}

// The shown result's terms for the query: the keys chosen from its row of weights (one tile), then
// the terms of those keys alone (a 131k-key row would otherwise build every key's vectors).
void NeuronView::rebuild() {
    m_terms.reset();
    m_shown.clear();
    const std::size_t index = m_state ? static_cast<std::size_t>(std::max(0, m_state->resultIndex())) : 0;
    m_index = index;
    if (m_result && index < m_result->results.size() && m_result->results[index].weights) {
        const engine::AttentionResult& r = m_result->results[index];
        const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(std::max<std::int64_t>(r.heads - 1, 0)));
        const std::int64_t query = std::min<std::int64_t>(m_query->value(), std::max<std::int64_t>(r.n - 1, 0));
        const engine::WeightTile row = r.weights->tile(head, query, query + 1, 0, r.m, true);
        std::vector<std::int64_t> keys(static_cast<std::size_t>(r.m));
        std::iota(keys.begin(), keys.end(), 0);
        const std::size_t keep = std::min<std::size_t>(kShownKeys, keys.size());
        // strongest first; on a tie the allowed key, then the earlier one
        std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(keep), keys.end(), [&](std::int64_t a, std::int64_t b) {
            const float wa = row.weights[static_cast<std::size_t>(a)], wb = row.weights[static_cast<std::size_t>(b)];
            const bool la = row.reasons[static_cast<std::size_t>(a)] != 0, lb = row.reasons[static_cast<std::size_t>(b)] != 0;
            return wa != wb ? wa > wb : la != lb ? la : a < b;
        });
        for (std::size_t t = 0; t < keep; ++t) {
            auto one = engine::neuronTerms(*m_result, index, head, query, keys[t], keys[t] + 1);
            if (!one) {
                m_info->setText(tr("No neuron view for this result: %1").arg(QString::fromStdString(one.error().message)));
                m_shown.clear();
                m_terms.reset();
                break;
            }
            m_shown.push_back(std::move(one->keys.front()));
            if (!m_terms) m_terms = std::move(*one);
        }
        if (m_terms) m_terms->keys.clear();  // (the shown keys are m_shown)
    } else {
        m_info->setText(tr("Run a variant (F5): this tab explains, dimension by dimension, why the selected head's query "
                           "attends where it does."));
    }
    showTerms();
}

void NeuronView::setBeforeRotation(bool before) { m_beforeRotation->setChecked(before); }
bool NeuronView::rotationOffered() const { return m_terms && m_terms->hasRotation() && !m_shown.empty(); }
bool NeuronView::showsBeforeRotation() const { return rotationOffered() && m_beforeRotation->isChecked(); }

std::pair<double, double> NeuronView::scoreParts(int row) const {
    if (row < 0 || row >= static_cast<int>(m_shown.size())) return {0.0, 0.0};
    const engine::NeuronKey& key = m_shown[static_cast<std::size_t>(row)];
    return {key.score - termsOf(key), termsOf(key)};
}

// The variant's own terms of a key's score (Gemma 2's cap applies to the dot alone).
double NeuronView::termsOf(const engine::NeuronKey& key) {
    double sum = 0;
    for (const auto& [name, value] : key.terms) sum += value;
    return sum;
}

void NeuronView::showTerms() {
    const bool shown = m_terms && !m_shown.empty();
    showEmptyPlot(m_plot, !shown);
    m_barRect->setVisible(shown);
    m_scoreRect->setVisible(shown);
    m_beforeRotation->setVisible(rotationOffered());
    const bool before = showsBeforeRotation();
    if (!shown) {
        m_title->setText(m_result ? tr("No terms to show") : tr("No run yet"));
        replotWhenShown(m_plot);
        return;
    }
    const engine::NeuronTerms& t = *m_terms;
    const int rows = static_cast<int>(m_shown.size()), d = static_cast<int>(t.queryVector.size());
    m_map->data()->setSize(d, rows);
    m_map->data()->setRange(QCPRange(0, d - 1), QCPRange(0, rows - 1));
    double largest = 0;
    QSharedPointer<QCPAxisTickerText> rowTicks(new QCPAxisTickerText);
    QVector<double> rowIndex, weights, dots, termSums;
    bool anyTerm = false;
    for (int r = 0; r < rows; ++r) {
        const engine::NeuronKey& key = m_shown[static_cast<std::size_t>(r)];
        const std::vector<float>& product = before ? key.productBeforeRotation : key.product;
        for (int c = 0; c < d; ++c) {
            m_map->data()->setCell(c, r, product[static_cast<std::size_t>(c)]);
            largest = std::max(largest, std::abs(static_cast<double>(product[static_cast<std::size_t>(c)])));
        }
        rowTicks->addTick(r, keyLabel(key.index));
        rowIndex << r;
        weights << 100.0 * key.weight;
        const auto [dot, term] = scoreParts(r);
        dots << dot;
        termSums << term;
        anyTerm = anyTerm || !key.terms.empty();
    }
    if (!(largest > 0)) largest = 1;
    m_scale->setDataRange(QCPRange(-largest, largest));  // (centred: red adds to the dot, blue takes from it)
    m_plot->yAxis->setTicker(rowTicks);
    m_plot->xAxis->setRange(-0.5, d - 0.5);
    m_plot->yAxis->setRange(-0.5, rows - 0.5);
    m_bars->setData(rowIndex, weights, true);
    m_dotBars->setData(rowIndex, dots, true);
    // (grouped side by side only when there are terms: alone, the dot's bar sits on its row)
    if (anyTerm) {
        m_termBars->setData(rowIndex, termSums, true);
        if (!m_dotBars->barsGroup()) m_termBars->barsGroup()->insert(0, m_dotBars);
    } else {
        m_termBars->data()->clear();
        m_dotBars->setBarsGroup(nullptr);
    }
    m_dotBars->setName(anyTerm ? tr("scaled q·k") : QString());
    m_scoreRect->axis(QCPAxis::atBottom)->setLabel(anyTerm ? tr("score parts") : tr("score (scaled q·k)"));
    m_scoreRect->axis(QCPAxis::atLeft)->setRange(-0.5, rows - 0.5);
    double low = 0, high = 0;
    for (int r = 0; r < rows; ++r) {
        low = std::min({low, dots[r], termSums[r]});
        high = std::max({high, dots[r], termSums[r]});
    }
    const double margin = 0.1 * std::max(high - low, 1e-6);
    m_scoreRect->axis(QCPAxis::atBottom)->setRange(low - (low < 0 ? margin : 0), high + margin);
    m_barRect->axis(QCPAxis::atLeft)->setRange(-0.5, rows - 0.5);
    m_barRect->axis(QCPAxis::atBottom)->setRange(0, std::max(5.0, 1.1 * *std::max_element(weights.begin(), weights.end())));
    const engine::NeuronKey& top = m_shown.front();
    // (named as every view names it: a model layer's own attention, or a variant on its Q/K; two
    // lines, so that a long name never widens the plot's first column)
    QHash<QString, QString> names;
    if (const engine::VariantInfo* info = engine::findVariantInfo(t.variantId))
        names.insert(QString::fromStdString(t.variantId), QString::fromStdString(info->name));
    m_title->setText(tr("Neuron view — %1, head %2\nquery %3: q ⊙ k per dimension for its %4 strongest keys")
                         .arg(resultName(*m_result, m_index, names))
                         .arg(t.head)
                         .arg(keyLabel(t.query))
                         .arg(rows));
    QString terms;
    for (const auto& [name, value] : top.terms) terms += tr(", %1 %2").arg(QString::fromStdString(name)).arg(value, 0, 'f', 3);
    const QString rotation =
        !t.hasRotation() ? QString()
        : before ? tr(" Shown before the rotation: q and k with positions removed, whose dot (%1 for the strongest) is what the "
                      "head scores by content alone; the weights and scores stay the model's, after the rotation.")
                       .arg(top.dotBeforeRotation, 0, 'f', 3)
                 : tr(" A rotary layer: tick Before rotation to see the cells with the positions' turn undone.");
    m_info->setText(tr("Each row is a key, each cell one dimension's product q_c · k_c (red adds to the dot product, blue "
                       "takes from it). A row's cells sum to q · k_j; times the scale %1%2 it is the score (middle) the softmax turns "
                       "into the weight on the right, the heatmap's. The strongest, %3: dot %4, score %5%6, weight %7 %. "
                       "Hover a cell for q_c and k_c.%8")
                        .arg(t.scale, 0, 'g', 4)
                        .arg(top.terms.empty() ? QString() : tr(" (grey) plus the variant's own terms (orange)"))
                        .arg(keyLabel(top.index))
                        .arg(top.dot, 0, 'f', 3)
                        .arg(top.score, 0, 'f', 3)
                        .arg(terms)
                        .arg(100.0 * top.weight, 0, 'f', 1)
                        .arg(rotation));
    replotWhenShown(m_plot);
}

QString NeuronView::cellText(int row, int dimension) const {
    if (!m_terms || row < 0 || row >= static_cast<int>(m_shown.size()) || dimension < 0 ||
        dimension >= static_cast<int>(m_terms->queryVector.size()))
        return {};
    const engine::NeuronKey& key = m_shown[static_cast<std::size_t>(row)];
    const auto c = static_cast<std::size_t>(dimension);
    if (showsBeforeRotation())
        return tr("%1, dimension %2 before the rotation: q_c = %3, k_c = %4, q_c · k_c = %5 (of the row's dot %6; after it %7)")
            .arg(keyLabel(key.index))
            .arg(dimension)
            .arg(m_terms->queryBeforeRotation[c], 0, 'f', 4)
            .arg(key.keyBeforeRotation[c], 0, 'f', 4)
            .arg(key.productBeforeRotation[c], 0, 'f', 4)
            .arg(key.dotBeforeRotation, 0, 'f', 4)
            .arg(key.dot, 0, 'f', 4);
    return tr("%1, dimension %2: q_c = %3, k_c = %4, q_c · k_c = %5 (of the row's dot %6)")
        .arg(keyLabel(key.index))
        .arg(dimension)
        .arg(m_terms->queryVector[c], 0, 'f', 4)
        .arg(key.key[c], 0, 'f', 4)
        .arg(key.product[c], 0, 'f', 4)
        .arg(key.dot, 0, 'f', 4);
}

void NeuronView::hover(QMouseEvent* event) {
    if (!m_terms || !m_plot->axisRect()->rect().contains(event->pos())) {
        QToolTip::hideText();
        return;
    }
    const int dimension = static_cast<int>(std::lround(m_plot->xAxis->pixelToCoord(event->pos().x())));
    const int row = static_cast<int>(std::lround(m_plot->yAxis->pixelToCoord(event->pos().y())));
    const QString text = cellText(row, dimension);
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

}  // namespace attnscope::views
