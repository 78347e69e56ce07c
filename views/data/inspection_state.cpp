#include "views/data/inspection_state.h"

namespace attnscope::views {

InspectionState::InspectionState(QObject* parent) : QObject(parent) {}

void InspectionState::setResultIndex(int index) {
    if (index == m_resultIndex) return;
    m_resultIndex = index;
    Q_EMIT resultIndexChanged(index);
}

void InspectionState::setLayer(int layer) {
    if (layer == m_layer) return;
    m_layer = layer;
    Q_EMIT layerChanged(layer);
}

void InspectionState::setHead(int head) {
    if (head == m_head) return;
    m_head = head;
    Q_EMIT headChanged(head);
}

void InspectionState::setHovered(int query, int key) {
    if (query == m_hoveredQuery && key == m_hoveredKey) return;
    m_hoveredQuery = query;
    m_hoveredKey = key;
    Q_EMIT hoveredChanged(query, key);
}

void followInspectionState(QObject* view, QPointer<InspectionState>& current, InspectionState* state,
                           const std::function<void()>& rebuild) {
    if (current) QObject::disconnect(current, nullptr, view, nullptr);
    current = state;
    if (state) {
        QObject::connect(state, &InspectionState::headChanged, view, rebuild);
        QObject::connect(state, &InspectionState::resultIndexChanged, view, rebuild);
    }
    rebuild();
}

}  // namespace attnscope::views
