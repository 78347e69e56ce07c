#pragma once
// The Q–K map of every head of a run at once (AttentionViz's small multiples): one small PCA map
// per head in one plot, queries ● and keys ▲ after the same key translation and scaling as the
// single map, the selected head framed; a click on a head's map selects that head. The maps are
// computed on the views' worker, a newer request dropping the older.

#include <attnscope/qk_map.h>
#include <attnscope/types.h>

#include "views/data/latest_job.h"

#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;
class QCPAxisRect;
class QMouseEvent;

namespace attnscope::views {

class QkMapGrid : public QWidget {
    Q_OBJECT
public:
    /// Heads drawn at most (a run with more shows its first ones and says so).
    static constexpr int kMostHeads = 32;

    explicit QkMapGrid(QWidget* parent = nullptr);

    /// Every head of result `index` of `run` by PCA with `options`' translation and scaling.
    void setResult(std::shared_ptr<const engine::RunResult> run, std::size_t index, const engine::QkMapOptions& options);
    void setSelectedHead(int head);
    bool isComputing() const { return m_computing; }
    /// The maps drawn, head by head (empty while they are computed).
    const std::vector<engine::QkMap>& maps() const { return m_maps; }
    /// The head whose map holds widget point `pos` (-1: none).
    int headAt(const QPoint& pos) const;

Q_SIGNALS:
    void headClicked(int head);

private:
    void draw();
    void clicked(QMouseEvent* event);

    std::vector<engine::QkMap> m_maps;
    std::vector<QCPAxisRect*> m_rects;
    int m_selected = 0;
    bool m_computing = false;
    LatestJob m_job;
    QCustomPlot* m_plot = nullptr;
};

}  // namespace attnscope::views
