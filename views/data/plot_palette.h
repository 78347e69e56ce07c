#pragma once
// Plots follow the application palette: the views style their QCustomPlots from the palette when
// they are built, and these helpers restyle existing plots when the theme changes (axes, tick
// labels and titles in the Text colour, background in the Base colour). Colour maps are untouched.

#include <QPalette>
#include <QPointer>

class QWidget;

namespace attnscope::views {

/// Restyles every QCustomPlot under `root` (root included) from `palette` and queues a replot.
void applyPaletteToPlots(QWidget* root, const QPalette& palette);

/// While alive, `view` and its plots use a light palette, so exported figures stay black on
/// white (FORMATS.md §5) whatever the theme; the destructor restores the view. A no-op when the
/// view is already light.
class LightFigureScope {
public:
    explicit LightFigureScope(QWidget* view);
    ~LightFigureScope();
    LightFigureScope(const LightFigureScope&) = delete;
    LightFigureScope& operator=(const LightFigureScope&) = delete;

    /// True when the palette's Base colour is dark (the dark theme).
    static bool isDark(const QPalette& palette);

private:
    QPointer<QWidget> m_view;
    QPalette m_oldPalette;
    bool m_hadOwnPalette = false;
};

}  // namespace attnscope::views
