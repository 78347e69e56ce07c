#pragma once
// The Star-Transformer's cycles, step by step (Diagnostics page of `star`): the satellites on a
// ring (closed) or a line (open, as fastNLP) around the relay hub; for the selected head and the
// cycle shown, the ring edges by the weight neighbours give each other, the hub's edges by the
// relay's weight on each satellite, each node's ring by its weight on its own embedding, and the
// node coloured by how much it changed in that cycle. Play / pause (Space), step (← →, [ ]), or
// the slider; hover a node for its five weights and the relay's weight on it.

#include "views/diagnostics/result_page.h"
#include <attnscope/star_transformer.h>
#include <attnscope/types.h>

#include <QPointer>
#include <QString>
#include <QWidget>

#include <memory>

class QCheckBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;

namespace attnscope::views {

class InspectionState;
class StarCanvas;

class StarPlayer : public ResultPage {
    Q_OBJECT
public:
    static constexpr int kDefaultCycles = 3;
    static constexpr int kPlayIntervalMs = 900;
    explicit StarPlayer(QWidget* parent = nullptr);
    ~StarPlayer() override;

    /// A run: its text, tokenizer and projections are what the cycles run on (random weights from
    /// its seed); starRequested asks for them once the page shows.
    void setResult(Run result) override;
    /// The cycles (Engine::runStar); ignored unless they are for the shown run's request.
    void setPass(const engine::StarRequest& request, std::shared_ptr<const engine::StarPass> pass);
    void setFailed(const QString& message);
    /// A Star-Transformer folder whose weights the cycles use ("" = random weights from the seed).
    void setModelFolder(const QString& folder);
    QString modelFolder() const { return m_modelFolder; }

    /// 1 … T: the cycle whose updates are drawn.
    int cycle() const { return m_cycle; }
    void showCycle(int cycle);
    void play();
    void pause();
    bool playing() const;
    int head() const;
    const engine::StarPass* pass() const { return m_pass.get(); }
    /// The request the shown run asks for (cycles and ring from the controls).
    engine::StarRequest request() const;
    /// The hover text of satellite i at the shown cycle ("" out of range).
    QString nodeSummary(long long i) const;
    QString message() const;
    QSpinBox* cyclesSpin() const { return m_cyclesBox; }
    QCheckBox* cyclicCheck() const { return m_cyclic; }
    QSlider* cycleSlider() const { return m_slider; }
    StarCanvas* canvas() const { return m_canvas; }

Q_SIGNALS:
    /// Intent: run the Star-Transformer for the shown run (the app answers with setPass).
    void starRequested(const attnscope::engine::StarRequest& request);
    /// Intent: choose a Star-Transformer model folder (the app answers with setModelFolder).
    void openModelRequested();
    /// The cycles shown changed (a new pass, or none).
    void passChanged(std::shared_ptr<const attnscope::engine::StarPass> pass);
    void cycleChanged(int cycle);

protected:
    void showEvent(QShowEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    void requestOnce();
    void rerun();
    void rebuild() override;

    QLabel* m_info = nullptr;
    QSpinBox* m_cyclesBox = nullptr;
    QCheckBox* m_cyclic = nullptr;
    QSlider* m_slider = nullptr;
    QPushButton* m_playButton = nullptr;
    QTimer* m_timer = nullptr;
    StarCanvas* m_canvas = nullptr;
    std::shared_ptr<const engine::StarPass> m_pass;
    QString m_error;
    QString m_modelFolder;
    QPushButton* m_randomButton = nullptr;
    bool m_asked = false;
    int m_cycle = 1;
};

/// The drawing: node positions and hit testing are public for tests.
class StarCanvas : public QWidget {
    Q_OBJECT
public:
    explicit StarCanvas(StarPlayer* player);
    QPointF nodePosition(long long i) const;
    QPointF hubPosition() const;
    /// The satellite under `point`, or −1.
    long long nodeAt(const QPointF& point) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    double nodeRadius() const;
    StarPlayer* m_player = nullptr;
};

}  // namespace attnscope::views
