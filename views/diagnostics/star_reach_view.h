#pragma once
// What reaches each Star-Transformer satellite after t cycles (attnscope/star_reach.h): node i's
// share from input j as an n × n heatmap (log scale) for the player's cycle, with how much comes
// from within ring distance t — what the ring alone could carry — and how much from farther, which
// only the relay carries.

#include <attnscope/star_reach.h>

#include <QWidget>

#include <memory>
#include <optional>

class QCustomPlot;
class QCPColorMap;
class QLabel;

namespace attnscope::views {

class StarReachView : public QWidget {
    Q_OBJECT
public:
    explicit StarReachView(QWidget* parent = nullptr);

    void setPass(std::shared_ptr<const engine::StarPass> pass);
    /// 0 … T (0: the embeddings themselves).
    void setCycle(int cycle);
    int cycle() const { return m_cycle; }
    const std::optional<engine::StarReach>& reach() const { return m_reach; }
    /// Mean over nodes of the share from inputs within ring distance `cycle` and beyond it.
    double ringShare() const { return m_ringShare; }
    double farShare() const { return m_farShare; }
    double cell(long long node, long long input) const;
    QString message() const;
    QCustomPlot* plot() const { return m_plot; }

private:
    void rebuild();
    void drawRingBand(const engine::StarReach& r, int t);

    QLabel* m_info = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    std::shared_ptr<const engine::StarPass> m_pass;
    std::optional<engine::StarReach> m_reach;
    int m_cycle = 1;
    double m_ringShare = 0, m_farShare = 0;
};

}  // namespace attnscope::views
