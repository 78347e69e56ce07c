#include "views/qkmap/qk_map_view.h"
#include "views/qkmap/qk_map_grid.h"

#include "views/data/background_job.h"
#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"
#include "views/data/token_label.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr int kPositionBands = 12;
constexpr std::int64_t kMostLabelledPoints = 120;  // (points coloured by position: one graph per band of positions)
const QColor kQueryColour(31, 119, 180), kKeyColour(255, 127, 14), kLinkColour(214, 39, 40);

QCPGraph* scatterGraph(QCustomPlot* plot, const QColor& colour, QCPScatterStyle::ScatterShape shape, double size) {
    QCPGraph* g = plot->addGraph();
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(shape, colour, colour, size));
    g->setSelectable(QCP::stNone);
    return g;
}

}  // namespace

QkMapView::QkMapView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(9, 6, 9, 0);
    controls->addWidget(new QLabel(tr("Placed by"), this));
    m_method = new QComboBox(this);
    m_method->addItem(tr("PCA"));
    m_method->addItem(tr("t-SNE"));
    m_method->addItem(tr("UMAP"));
    m_method->setToolTip(tr("PCA: the two directions of most spread, exact and instant. t-SNE: neighbours kept together "
                            "(perplexity 30, seed 0). UMAP: neighbours kept together and more of the groups' layout "
                            "(15 neighbours, min_dist 0.1, seed 0). Both computed in the background"));
    controls->addWidget(m_method);
    controls->addWidget(new QLabel(tr("Colour by"), this));
    m_colour = new QComboBox(this);
    m_colour->addItem(tr("kind (queries, keys)"));
    m_colour->addItem(tr("position (early dark, late bright)"));
    controls->addWidget(m_colour);
    m_translate = new QCheckBox(tr("Move keys to the queries' mean"), this);
    m_translate->setChecked(true);
    m_translate->setToolTip(tr("Adds the same amount to every score of a row: no weight changes (AttentionViz's key translation)"));
    controls->addWidget(m_translate);
    m_scale = new QCheckBox(tr("Equal mean norms"), this);
    m_scale->setChecked(true);
    m_scale->setToolTip(tr("Queries × s, keys ÷ s: every q · k unchanged"));
    controls->addWidget(m_scale);
    m_allHeads = new QCheckBox(tr("All heads"), this);
    m_allHeads->setToolTip(tr("Every head's map at once (PCA), small; click one to see it large"));
    controls->addWidget(m_allHeads);
    controls->addStretch(1);
    layout->addLayout(controls);
    m_info = addExplanationLabel(this, layout);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->setMinimumHeight(320);
    m_plot->xAxis->setLabel(tr("first axis"));
    m_plot->yAxis->setLabel(tr("second axis"));
    layout->addWidget(m_plot, 1);
    m_grid = new QkMapGrid(this);
    m_grid->hide();
    layout->addWidget(m_grid, 1);
    connect(m_allHeads, &QCheckBox::toggled, this, [this] { rebuild(); });
    connect(m_grid, &QkMapGrid::headClicked, this, [this](int head) {
        if (m_state) m_state->setHead(head);
        setAllHeads(false);
    });
    connect(m_colour, &QComboBox::currentIndexChanged, this,
            [this](int index) { setColouring(index == 1 ? Colouring::Position : Colouring::Kind); });
    const auto optionsChanged = [this] {
        engine::QkMapOptions o;
        o.translateKeys = m_translate->isChecked();
        o.scale = m_scale->isChecked();
        o.method = static_cast<engine::QkMapOptions::Method>(m_method->currentIndex());  // (PCA, t-SNE, UMAP in order)
        setOptions(o);
    };
    connect(m_translate, &QCheckBox::toggled, this, optionsChanged);
    connect(m_scale, &QCheckBox::toggled, this, optionsChanged);
    connect(m_method, &QComboBox::currentIndexChanged, this, optionsChanged);
    m_progressTimer = new QTimer(this);
    m_progressTimer->setInterval(200);
    connect(m_progressTimer, &QTimer::timeout, this, [this] {
        if (m_computing) m_info->setText(tr("Placing the queries and keys by %1: %2 %…").arg(methodName()).arg(std::max(0, m_computing->load())));
    });
    connect(m_plot, &QCustomPlot::mousePress, this, &QkMapView::clicked);
    rebuild();
}

QkMapView::~QkMapView() = default;

void QkMapView::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
    if (m_state)
        connect(m_state, &InspectionState::hoveredChanged, this, [this](int query, int) {
            if (query < 0 || query == m_query) return;
            m_query = query;
            draw();
        });
}

void QkMapView::setAllHeads(bool all) { m_allHeads->setChecked(all); }
bool QkMapView::showsAllHeads() const { return m_allHeads->isChecked(); }

void QkMapView::setResult(Run result) {
    m_result = std::move(result);
    m_gridOf = {};
    rebuild();
}

void QkMapView::setColouring(Colouring colouring) {
    m_colouring = colouring;
    const QSignalBlocker quiet(m_colour);
    m_colour->setCurrentIndex(colouring == Colouring::Position ? 1 : 0);
    draw();
}

void QkMapView::setOptions(const engine::QkMapOptions& options) {
    m_options = options;
    {
        const QSignalBlocker quietTranslate(m_translate), quietScale(m_scale), quietMethod(m_method);
        m_translate->setChecked(options.translateKeys);
        m_scale->setChecked(options.scale);
        m_method->setCurrentIndex(static_cast<int>(options.method));
    }
    rebuild();
}

QString QkMapView::explanation() const { return m_info->text(); }

// The grid is computed again only for another result or other options; a head change frames it.
void QkMapView::showAllHeads(std::size_t index) {
    const GridKey key{m_result.get(), index, m_options.translateKeys, m_options.scale};
    if (!(key == m_gridOf)) {
        m_gridOf = key;
        m_grid->setResult(m_result, index, m_options);
    }
    m_grid->setSelectedHead(m_state ? m_state->head() : 0);
    m_info->setText(m_result ? tr("Every head's queries (●) and keys (▲) placed by PCA, each in its own plane%1; the selected head "
                                  "is framed. Heads whose maps look alike treat the tokens alike. Click a head to see it large.")
                                   .arg(m_result->heads > QkMapGrid::kMostHeads ? tr(" (the first %1 heads)").arg(QkMapGrid::kMostHeads) : QString())
                             : tr("Run a variant (F5): this tab places the heads' queries and keys in one plane each."));
}

void QkMapView::rebuild() {
    m_map.reset();
    if (m_computing) m_computing->store(-1);  // (an earlier t-SNE stops at its next check)
    m_computing.reset();
    m_progressTimer->stop();
    m_job.drop();
    const std::size_t index = m_state ? static_cast<std::size_t>(std::max(0, m_state->resultIndex())) : 0;
    m_plot->setVisible(!showsAllHeads());
    m_grid->setVisible(showsAllHeads());
    if (showsAllHeads()) {
        showAllHeads(index);
        return;
    }
    m_gridOf = {};
    if (m_result && index < m_result->results.size() && m_options.method != engine::QkMapOptions::Method::Pca) {
        startEmbedding(index, m_state ? m_state->head() : 0);
        return;
    }
    if (m_result && index < m_result->results.size()) {
        const int head = m_state ? m_state->head() : 0;
        auto map = engine::queryKeyMap(*m_result, index, head, m_options);
        if (map) m_map = std::move(*map);
        else m_info->setText(tr("No query–key map for this result: %1").arg(QString::fromStdString(map.error().message)));
    } else {
        m_info->setText(tr("Run a variant (F5): this tab places the selected head's queries and keys in one plane."));
    }
    if (m_map && m_state && m_state->hoveredQuery() >= 0) m_query = m_state->hoveredQuery();
    draw();
}

QString QkMapView::methodName() const {
    switch (m_options.method) {
    case engine::QkMapOptions::Method::Pca: return tr("PCA");
    case engine::QkMapOptions::Method::Tsne: return tr("t-SNE");
    case engine::QkMapOptions::Method::Umap: return tr("UMAP");
    }
    return {};
}

void QkMapView::startEmbedding(std::size_t index, int head) {
    auto progress = std::make_shared<std::atomic<int>>(0);
    m_computing = progress;
    const std::uint64_t ticket = m_job.start();
    m_info->setText(tr("Placing the queries and keys by %1…").arg(methodName()));
    m_progressTimer->start();
    draw();
    auto error = std::make_shared<QString>();
    runInBackground<std::optional<engine::QkMap>>(
        this,
        [run = m_result, index, head, options = m_options, progress, error]() -> std::optional<engine::QkMap> {
            auto map = engine::queryKeyMap(*run, index, head, options, [progress](const engine::Progress& p) {
                if (progress->load() < 0) return false;
                progress->store(static_cast<int>(100 * p.done / std::max<std::int64_t>(p.total, 1)));
                return true;
            });
            if (!map) {
                *error = QString::fromStdString(map.error().message);
                return std::nullopt;
            }
            return std::move(*map);
        },
        [this, ticket, error](std::optional<engine::QkMap> map) {
            if (!m_job.isLatest(ticket)) return;
            m_computing.reset();
            m_progressTimer->stop();
            m_map = std::move(map);
            if (!m_map) m_info->setText(tr("No %1 map: %2").arg(methodName(), *error));
            draw();
        });
}

void QkMapView::draw() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_linked.clear();
    showEmptyPlot(m_plot, !m_map);
    if (!m_map) {
        replotWhenShown(m_plot);
        return;
    }
    const engine::QkMap& map = *m_map;
    const bool pca = m_options.method == engine::QkMapOptions::Method::Pca;
    m_plot->xAxis->setLabel(pca ? tr("first principal axis") : tr("%1 axis 1").arg(methodName()));
    m_plot->yAxis->setLabel(pca ? tr("second principal axis") : tr("%1 axis 2").arg(methodName()));
    std::int64_t n = 0, m = 0;
    for (const engine::QkMapPoint& p : map.points) (p.isKey ? m : n) += 1;
    // one graph per kind, or per kind and band of positions
    const int bands = m_colouring == Colouring::Position ? kPositionBands : 1;
    std::vector<QCPGraph*> queries, keys;
    for (int b = 0; b < bands; ++b) {
        const QColor q = bands == 1 ? kQueryColour : QColor(Colormap::viridis().map((b + 0.5) / bands));
        const QColor k = bands == 1 ? kKeyColour : q;
        queries.push_back(scatterGraph(m_plot, q, QCPScatterStyle::ssDisc, 6));
        keys.push_back(scatterGraph(m_plot, k, QCPScatterStyle::ssTriangle, 7));
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, bottom = lo, top = -lo;
    for (const engine::QkMapPoint& p : map.points) {
        const std::int64_t count = p.isKey ? m : n;
        const int band = static_cast<int>(std::min<std::int64_t>(bands - 1, p.index * bands / std::max<std::int64_t>(count, 1)));
        (p.isKey ? keys : queries)[static_cast<std::size_t>(band)]->addData(p.x, p.y);
        lo = std::min(lo, static_cast<double>(p.x)), hi = std::max(hi, static_cast<double>(p.x));
        bottom = std::min(bottom, static_cast<double>(p.y)), top = std::max(top, static_cast<double>(p.y));
    }
    // a short text's points carry their tokens (a long one's would cover the map)
    if (m_result && n + m <= kMostLabelledPoints) {
        QFont small = m_plot->font();
        small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
        for (const engine::QkMapPoint& p : map.points) {
            if (p.index >= static_cast<std::int64_t>(m_result->input.tokens.size())) continue;
            auto* label = new QCPItemText(m_plot);
            label->position->setCoords(p.x, p.y);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            label->setPadding(QMargins(6, 0, 0, 0));
            label->setFont(small);
            label->setColor((p.isKey ? kKeyColour : kQueryColour).darker(130));
            label->setText(tokenLabel(m_result->input.tokens[static_cast<std::size_t>(p.index)].text, 8));
        }
    }
    const double padX = 0.08 * std::max(hi - lo, 1e-6), padY = 0.05 * std::max(top - bottom, 1e-6);
    m_plot->xAxis->setRange(lo - padX, hi + padX);
    m_plot->yAxis->setRange(bottom - padY, top + padY);
    // the selected query: lines to the keys it weighs most (the result's weights, the heatmap's)
    const std::size_t index = m_state ? static_cast<std::size_t>(std::max(0, m_state->resultIndex())) : 0;
    if (m_query >= 0 && m_query < n && m_result && index < m_result->results.size()) {
        const engine::AttentionResult& r = m_result->results[index];
        const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(r.heads - 1));
        std::vector<std::pair<float, std::int64_t>> weights;
        const engine::WeightTile row = r.weights->tile(head, m_query, m_query + 1, 0, r.m);
        for (std::int64_t j = 0; j < std::min(r.m, m); ++j) weights.emplace_back(row.weights[static_cast<std::size_t>(j)], j);
        const std::size_t keep = std::min<std::size_t>(kLinkedKeys, weights.size());
        std::partial_sort(weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(keep), weights.end(),
                          [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
        const engine::QkMapPoint& q = map.points[static_cast<std::size_t>(m_query)];
        for (std::size_t t = 0; t < keep && weights[t].first > 0; ++t) {
            const engine::QkMapPoint& k = map.points[static_cast<std::size_t>(n + weights[t].second)];
            auto* line = new QCPItemLine(m_plot);
            line->start->setCoords(q.x, q.y);
            line->end->setCoords(k.x, k.y);
            QColor c = kLinkColour;
            c.setAlphaF(0.35 + 0.65 * std::min(1.0, static_cast<double>(weights[t].first) / static_cast<double>(weights[0].first)));
            line->setPen(QPen(c, 2.0));
            m_linked.push_back(weights[t].second);
        }
        scatterGraph(m_plot, kLinkColour, QCPScatterStyle::ssCircle, 14)->addData(q.x, q.y);
    }
    const QString query = m_query >= 0 && m_result && m_query < static_cast<int>(m_result->input.tokens.size())
                              ? QStringLiteral("‘%1’ %2").arg(tokenLabel(m_result->input.tokens[static_cast<std::size_t>(m_query)].text)).arg(m_query)
                              : QString::number(m_query);
    const QString placed = m_options.method != engine::QkMapOptions::Method::Pca
                               ? tr("placed by %1 (neighbours in the head's space stay neighbours; distances between "
                                    "groups mean little)").arg(methodName())
                               : tr("placed by their two principal axes (%1 % and %2 % of the spread)")
                                     .arg(100.0 * map.explained[0], 0, 'f', 1)
                                     .arg(100.0 * map.explained[1], 0, 'f', 1);
    m_info->setText(tr("Each query (●) and key (▲) of head %1, %2%3. A query's score with a key grows with how far the key lies along the query's direction, "
                       "so the keys a query weighs most tend to sit on its side of the map. %4 Click a point to select "
                       "its token in every view.")
                        .arg(m_state ? m_state->head() : 0)
                        .arg(placed)
                        .arg(m_options.translateKeys || m_options.scale
                                 ? tr(", the keys moved to the queries' mean and both scaled to equal mean norms (no weight changes)")
                                 : QString())
                        .arg(m_query >= 0 ? tr("The red lines join query %1 to the %2 keys it weighs most.").arg(query).arg(m_linked.size())
                                          : tr("Hover or click a query to see the keys it weighs most.")));
    replotWhenShown(m_plot);
}

int QkMapView::nearestPoint(double x, double y) const {
    if (!m_map) return -1;
    // (in pixels: the two axes have different scales)
    const double px = m_plot->xAxis->coordToPixel(x), py = m_plot->yAxis->coordToPixel(y);
    int best = -1;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < m_map->points.size(); ++i) {
        const double dx = m_plot->xAxis->coordToPixel(m_map->points[i].x) - px, dy = m_plot->yAxis->coordToPixel(m_map->points[i].y) - py;
        if (dx * dx + dy * dy < bestDistance) {
            bestDistance = dx * dx + dy * dy;
            best = static_cast<int>(i);
        }
    }
    return best;
}

void QkMapView::selectPoint(int index) {
    if (!m_map || index < 0 || index >= static_cast<int>(m_map->points.size())) return;
    const engine::QkMapPoint& p = m_map->points[static_cast<std::size_t>(index)];
    if (!p.isKey) m_query = static_cast<int>(p.index);
    if (m_state) m_state->setHovered(p.isKey ? std::max(m_query, 0) : static_cast<int>(p.index), p.isKey ? static_cast<int>(p.index) : -1);
    draw();
}

void QkMapView::clicked(QMouseEvent* event) {
    if (!m_map || !m_plot->axisRect()->rect().contains(event->pos())) return;
    selectPoint(nearestPoint(m_plot->xAxis->pixelToCoord(event->pos().x()), m_plot->yAxis->pixelToCoord(event->pos().y())));
}

}  // namespace attnscope::views
