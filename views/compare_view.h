#pragma once
// The compare view: two variants run on the same input and Q, K, V (one RunRequest), side by
// side for the same head on one colour scale, with synchronised hover and a shared info line.

#include <attnscope/types.h>

#include <QHash>
#include <QPointer>
#include <QString>
#include <QWidget>

#include <array>
#include <memory>

class QLabel;

namespace attnscope::views {

class HeadHeatmap;
class InspectionState;

class CompareView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPaneCount = 2;

    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    /// Follows state->head(); the panes show RunResult::results[0] and [1] whatever
    /// state->resultIndex() says. Hovered cells are written to state->setHovered().
    void setInspectionState(InspectionState* state);
    void setResult(std::shared_ptr<const engine::RunResult> result);
    void setVariantNames(const QHash<QString, QString>& idToName);

    HeadHeatmap* pane(int index) const { return m_panes[static_cast<std::size_t>(index)]; }
    /// True when the result holds two variants to compare.
    bool hasComparison() const;
    // Test accessors. The hovered cell is marked in every pane; (-1, -1) when none.
    int hoveredQuery(int pane) const;
    int hoveredKey(int pane) const;
    /// Weight that pane shows at the hovered cell (0 outside its pattern); NaN when none.
    double shownValue(int pane) const;
    /// False when the hovered cell is outside that pane's pattern.
    bool shownInPattern(int pane) const;
    /// "query 3 'it' → key 1 'cat': A = 0.1200, B = 0.0300"; B reads "— (not in pattern)" there.
    QString infoText() const;

public Q_SLOTS:
    /// As if the pointer were over (query, key) of either pane; (-1, -1) clears.
    void hoverCell(int query, int key);

Q_SIGNALS:
    /// Intent: (query, key) is hovered in one of the panes; (-1, -1) when the pointer left.
    void cellHovered(int query, int key);

private:
    void syncHead();
    void updateSharedRange();
    void updateInfo();
    const engine::AttentionResult* paneResult(int pane) const;
    QString describe(const QString& role, int index) const;

    std::array<HeadHeatmap*, kPaneCount> m_panes{};
    std::array<InspectionState*, kPaneCount> m_paneStates{};
    QLabel* m_info = nullptr;
    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    int m_query = -1;
    int m_key = -1;
};

}  // namespace attnscope::views
