#include "views/help/help_panel.h"

#include "views/help/view_guide.h"

#include <QTextBrowser>

namespace attnscope::views {

HelpPanel::HelpPanel(QWidget* parent) : QDockWidget(tr("What am I looking at?"), parent) {
    setObjectName(QStringLiteral("helpPanel"));  // (saved with the window state)
    m_browser = new QTextBrowser(this);
    m_browser->setOpenExternalLinks(false);
    m_browser->setMinimumWidth(280);
    setWidget(m_browser);
    setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
    refresh();
}

void HelpPanel::setView(const QString& viewKey) {
    if (viewKey == m_view) return;
    m_view = viewKey;
    refresh();
}

void HelpPanel::setVariant(const engine::VariantInfo& variant) {
    if (m_variant && m_variant->id == variant.id) return;
    m_variant = variant;
    refresh();
}

QString HelpPanel::plainText() const { return m_browser->toPlainText(); }

void HelpPanel::refresh() {
    m_browser->setHtml(helpPageHtml(m_view, m_variant ? &*m_variant : nullptr) + shortcutsHtml());
}

}  // namespace attnscope::views
