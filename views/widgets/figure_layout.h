#pragma once
// A view that lays itself out differently as a figure than in the window (the compare view puts
// its tabbed panels on one page; the mask view leaves out an empty row panel). The exporter holds a
// FigureLayoutScope while it paints.

#include <QCoreApplication>
#include <QEvent>
#include <QSize>
#include <QVariant>
#include <QWidget>

namespace attnscope::views {

class FigureLayout {
public:
    virtual ~FigureLayout() = default;
    /// Lays the view out for a figure (a slide when `slide`) and returns the size it needs then,
    /// given the size it has in the window.
    virtual QSize beginFigureLayout(QSize windowSize, bool slide) = 0;
    /// Back to the window's layout.
    virtual void endFigureLayout() = 0;

protected:
    FigureLayout() = default;
    FigureLayout(const FigureLayout&) = default;
    FigureLayout& operator=(const FigureLayout&) = default;
};

/// While alive, a view that is a FigureLayout is laid out as a figure at the size it asks for.
class FigureLayoutScope {
public:
    FigureLayoutScope(QWidget* view, bool slide) : m_layout(dynamic_cast<FigureLayout*>(view)), m_view(view) {
        // Scopes nest (an export that renders through another export step): the outer one lays out.
        if (!m_layout || view->property(kActive).toBool()) {
            m_layout = nullptr;
            return;
        }
        view->setProperty(kActive, true);
        m_size = view->size();
        const QSize need = m_layout->beginFigureLayout(m_size, slide);
        view->resize(need);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    ~FigureLayoutScope() {
        if (!m_layout) return;
        m_layout->endFigureLayout();
        m_view->setProperty(kActive, false);
        m_view->resize(m_size);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    FigureLayoutScope(const FigureLayoutScope&) = delete;
    FigureLayoutScope& operator=(const FigureLayoutScope&) = delete;

private:
    static constexpr const char* kActive = "attnscopeFigureLayoutActive";
    FigureLayout* m_layout = nullptr;
    QWidget* m_view = nullptr;
    QSize m_size;
};

}  // namespace attnscope::views
