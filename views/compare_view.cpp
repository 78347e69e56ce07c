#include "views/compare_view.h"

#include "views/head_heatmap.h"
#include "views/inspection_state.h"
#include "views/token_label.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

const char* const kPaneNames[CompareView::kPaneCount] = {"A", "B"};

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* panes = new QHBoxLayout;
    for (int i = 0; i < kPaneCount; ++i) {
        auto* state = new InspectionState(this);
        state->setResultIndex(i);
        auto* pane = new HeadHeatmap(this);
        pane->setInspectionState(state);
        pane->setTitlePrefix(QStringLiteral("%1: ").arg(QLatin1String(kPaneNames[i])));
        pane->setToolbarVisible(false);  // the main window shares the Heatmap tab's choices
        panes->addWidget(pane, 1);
        m_paneStates[static_cast<std::size_t>(i)] = state;
        m_panes[static_cast<std::size_t>(i)] = pane;
        connect(pane, &HeadHeatmap::cellHovered, this, &CompareView::hoverCell);
    }
    layout->addLayout(panes, 1);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);  // token text is untrusted
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_info->setContentsMargins(8, 2, 8, 4);
    QFont infoFont = m_info->font();
    infoFont.setPointSizeF(infoFont.pointSizeF() + 1);
    m_info->setFont(infoFont);
    layout->addWidget(m_info);
    updateInfo();
}

CompareView::~CompareView() = default;

void CompareView::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) connect(state, &InspectionState::headChanged, this, &CompareView::syncHead);
    syncHead();
}

void CompareView::setResult(std::shared_ptr<const engine::RunResult> result) {
    m_result = std::move(result);
    m_query = m_key = -1;
    for (HeadHeatmap* pane : m_panes) pane->setResult(m_result);
    updateSharedRange();
    updateInfo();
}

void CompareView::setVariantNames(const QHash<QString, QString>& idToName) {
    for (HeadHeatmap* pane : m_panes) pane->setVariantNames(idToName);
    updateSharedRange();
}

bool CompareView::hasComparison() const { return m_result && m_result->results.size() >= kPaneCount; }

void CompareView::syncHead() {
    const int head = m_state ? m_state->head() : 0;
    m_query = m_key = -1;
    for (InspectionState* state : m_paneStates) state->setHead(head);
    updateSharedRange();
    updateInfo();
}

void CompareView::updateSharedRange() {
    // One colour scale for both panes, or equal colours would not mean equal weights.
    float hi = 0.0f;
    for (HeadHeatmap* pane : m_panes) hi = std::max(hi, pane->matrixMax());
    for (HeadHeatmap* pane : m_panes) pane->setValueRange(0.0, hi > 0.0f ? hi : 0.0);
}

const engine::AttentionResult* CompareView::paneResult(int pane) const {
    if (!m_result || pane < 0 || pane >= static_cast<int>(m_result->results.size())) return nullptr;
    return &m_result->results[static_cast<std::size_t>(pane)];
}

void CompareView::hoverCell(int query, int key) {
    if (query == m_query && key == m_key) return;
    m_query = query;
    m_key = key;
    for (HeadHeatmap* pane : m_panes) pane->setMarkedCell(query, key);
    if (m_state) m_state->setHovered(query, key);
    updateInfo();
    Q_EMIT cellHovered(query, key);
}

int CompareView::hoveredQuery(int pane) const {
    return pane >= 0 && pane < kPaneCount ? m_panes[static_cast<std::size_t>(pane)]->markedQuery() : -1;
}

int CompareView::hoveredKey(int pane) const {
    return pane >= 0 && pane < kPaneCount ? m_panes[static_cast<std::size_t>(pane)]->markedKey() : -1;
}

double CompareView::shownValue(int pane) const {
    const engine::AttentionResult* r = paneResult(pane);
    const int head = pane >= 0 && pane < kPaneCount ? m_panes[static_cast<std::size_t>(pane)]->shownHead() : -1;
    if (!r || head < 0 || hoveredQuery(pane) < 0) return std::numeric_limits<double>::quiet_NaN();
    return r->weightAt(head, hoveredQuery(pane), hoveredKey(pane));
}

bool CompareView::shownInPattern(int pane) const {
    const engine::AttentionResult* r = paneResult(pane);
    const int head = pane >= 0 && pane < kPaneCount ? m_panes[static_cast<std::size_t>(pane)]->shownHead() : -1;
    if (!r || head < 0 || hoveredQuery(pane) < 0) return false;
    // A result without a listed pattern (rows unset) attends every key, as HeadMatrix assumes.
    if (r->pattern.rows != r->n) return true;
    return r->pattern.allows(head, hoveredQuery(pane), hoveredKey(pane));
}

QString CompareView::describe(const QString& role, int index) const {
    const auto& tokens = m_result->input.tokens;
    if (index < 0 || index >= static_cast<int>(tokens.size())) return QStringLiteral("%1 %2").arg(role).arg(index);
    return QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(tokenLabel(tokens[static_cast<std::size_t>(index)].text, 24));
}

QString CompareView::infoText() const { return m_info->text(); }

void CompareView::updateInfo() {
    if (!m_result) {
        m_info->setText(tr("No result yet."));
        return;
    }
    if (!hasComparison()) {
        m_info->setText(tr("Only one variant in this result: choose “Compare with” and run again (F5)."));
        return;
    }
    if (m_query < 0 || m_key < 0) {
        m_info->setText(tr("Hover a cell: the same (query, key) is marked in both panes, on one colour scale."));
        return;
    }
    QStringList values;
    for (int i = 0; i < kPaneCount; ++i) {
        const QString name = QLatin1String(kPaneNames[i]);
        values << (shownInPattern(i) ? QStringLiteral("%1 = %2").arg(name).arg(shownValue(i), 0, 'f', 4)
                                     : tr("%1 = — (not in pattern)").arg(name));
    }
    m_info->setText(QStringLiteral("%1 → %2: %3")
                        .arg(describe(tr("query"), m_query), describe(tr("key"), m_key), values.join(QStringLiteral(", "))));
}

}  // namespace attnscope::views
