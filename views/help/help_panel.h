#pragma once
// "What am I looking at?" (F1): a panel beside the views that explains the shown tab and the
// chosen variant (view_guide.h), and lists the keyboard shortcuts. It follows the window: the
// main window tells it the tab and the variant as they change.

#include <attnscope/variant_info.h>

#include <QDockWidget>

#include <optional>

class QTextBrowser;

namespace attnscope::views {

class HelpPanel : public QDockWidget {
    Q_OBJECT
public:
    explicit HelpPanel(QWidget* parent = nullptr);

    void setView(const QString& viewKey);
    void setVariant(const engine::VariantInfo& variant);
    /// The page as plain text (tests, and what a screen reader reads).
    QString plainText() const;

private:
    void refresh();

    QTextBrowser* m_browser = nullptr;
    QString m_view;
    std::optional<engine::VariantInfo> m_variant;
};

}  // namespace attnscope::views
