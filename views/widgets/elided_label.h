#pragma once
// A one-line label that never widens its window: it keeps the whole text (text(), its tooltip)
// and draws what fits, ending in "…" (the status bar's messages; a long warning had made the
// window's minimum width larger than a 1366-pixel screen).

#include <QLabel>

namespace attnscope::views {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);

    /// True when the last paint could not show the whole text.
    bool isElided() const { return m_elided; }
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    bool m_elided = false;
};

}  // namespace attnscope::views
