#include "views/qkmap/qk_map_grid.h"

#include "views/data/background_job.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {
namespace {

const QColor kQueryColour(31, 119, 180), kKeyColour(255, 127, 14), kSelectedFrame(214, 39, 40);

}  // namespace

QkMapGrid::QkMapGrid(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->setMinimumHeight(320);
    layout->addWidget(m_plot, 1);
    connect(m_plot, &QCustomPlot::mousePress, this, &QkMapGrid::clicked);
}

void QkMapGrid::setResult(std::shared_ptr<const engine::RunResult> run, std::size_t index, const engine::QkMapOptions& options) {
    m_maps.clear();
    const std::uint64_t ticket = m_job.start();
    m_computing = run && index < run->results.size();
    draw();
    if (!m_computing) return;
    engine::QkMapOptions pca = options;
    pca.method = engine::QkMapOptions::Method::Pca;  // (small multiples: the instant, exact placement)
    runInBackground<std::vector<engine::QkMap>>(
        this,
        [run, index, pca]() {
            std::vector<engine::QkMap> maps;
            const int heads = static_cast<int>(std::min<std::int64_t>(run->heads, kMostHeads));
            for (int h = 0; h < heads; ++h) {
                auto map = engine::queryKeyMap(*run, index, h, pca);
                if (!map) return std::vector<engine::QkMap>{};
                maps.push_back(std::move(*map));
            }
            return maps;
        },
        [this, ticket](std::vector<engine::QkMap> maps) {
            if (!m_job.isLatest(ticket)) return;
            m_computing = false;
            m_maps = std::move(maps);
            draw();
        });
}

void QkMapGrid::setSelectedHead(int head) {
    m_selected = head;
    for (std::size_t h = 0; h < m_rects.size(); ++h) {
        const bool selected = static_cast<int>(h) == m_selected;
        for (QCPAxis* axis : m_rects[h]->axes()) axis->setBasePen(QPen(selected ? kSelectedFrame : QColor(180, 180, 180), selected ? 2.5 : 1.0));
    }
    replotWhenShown(m_plot);
}

void QkMapGrid::draw() {
    m_plot->clearPlottables();
    m_plot->plotLayout()->clear();
    m_rects.clear();
    const int heads = static_cast<int>(m_maps.size());
    showEmptyPlot(m_plot, heads == 0);
    if (heads == 0) {
        replotWhenShown(m_plot);
        return;
    }
    const int columns = static_cast<int>(std::ceil(std::sqrt(heads * 1.6)));
    for (int h = 0; h < heads; ++h) {
        auto* rect = new QCPAxisRect(m_plot);
        m_plot->plotLayout()->addElement(h / columns, h % columns, rect);
        for (QCPAxis* axis : rect->axes()) {
            axis->setTicks(false);
            axis->setTickLabels(false);
        }
        rect->axis(QCPAxis::atTop)->setVisible(true);
        rect->axis(QCPAxis::atRight)->setVisible(true);
        rect->axis(QCPAxis::atBottom)->setLabel(tr("head %1").arg(h));
        rect->axis(QCPAxis::atBottom)->setLabelPadding(2);
        double lo = INFINITY, hi = -INFINITY, bottom = INFINITY, top = -INFINITY;
        QCPGraph* queries = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        QCPGraph* keys = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        for (auto [graph, colour, shape] : {std::tuple{queries, kQueryColour, QCPScatterStyle::ssDisc}, std::tuple{keys, kKeyColour, QCPScatterStyle::ssTriangle}}) {
            graph->setLineStyle(QCPGraph::lsNone);
            graph->setScatterStyle(QCPScatterStyle(shape, colour, colour, 3.5));
        }
        for (const engine::QkMapPoint& p : m_maps[static_cast<std::size_t>(h)].points) {
            (p.isKey ? keys : queries)->addData(p.x, p.y);
            lo = std::min(lo, double(p.x)), hi = std::max(hi, double(p.x));
            bottom = std::min(bottom, double(p.y)), top = std::max(top, double(p.y));
        }
        const double padX = 0.06 * std::max(hi - lo, 1e-6), padY = 0.06 * std::max(top - bottom, 1e-6);
        rect->axis(QCPAxis::atBottom)->setRange(lo - padX, hi + padX);
        rect->axis(QCPAxis::atLeft)->setRange(bottom - padY, top + padY);
        m_rects.push_back(rect);
    }
    setSelectedHead(m_selected);
}

int QkMapGrid::headAt(const QPoint& pos) const {
    for (std::size_t h = 0; h < m_rects.size(); ++h)
        if (m_rects[h]->outerRect().contains(pos)) return static_cast<int>(h);
    return -1;
}

void QkMapGrid::clicked(QMouseEvent* event) {
    const int head = headAt(event->pos());
    if (head >= 0) Q_EMIT headClicked(head);
}

}  // namespace attnscope::views
