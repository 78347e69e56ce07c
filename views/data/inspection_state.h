#pragma once
// What the user is looking at: one variant result, one layer and head, a hovered cell. Views
// observe it; only the app changes it (views emit intents instead).

#include <QObject>
#include <QPointer>

#include <functional>

namespace attnscope::views {

class InspectionState : public QObject {
    Q_OBJECT
public:
    explicit InspectionState(QObject* parent = nullptr);

    int resultIndex() const { return m_resultIndex; }  ///< index into RunResult::results
    int layer() const { return m_layer; }
    int head() const { return m_head; }
    int hoveredQuery() const { return m_hoveredQuery; }  ///< -1 when nothing is hovered
    int hoveredKey() const { return m_hoveredKey; }

public Q_SLOTS:
    void setResultIndex(int index);
    void setLayer(int layer);
    void setHead(int head);
    /// Pass (-1, -1) when the pointer leaves the matrix.
    void setHovered(int query, int key);

Q_SIGNALS:
    void resultIndexChanged(int index);
    void layerChanged(int layer);
    void headChanged(int head);
    void hoveredChanged(int query, int key);

private:
    int m_resultIndex = 0;
    int m_layer = 0;
    int m_head = 0;
    int m_hoveredQuery = -1;
    int m_hoveredKey = -1;
};

/// How a view follows the inspection state: replaces `current` (the view's member) by `state`,
/// calls `rebuild` now and again whenever the head or the shown result changes.
void followInspectionState(QObject* view, QPointer<InspectionState>& current, InspectionState* state,
                           const std::function<void()>& rebuild);

}  // namespace attnscope::views
