#pragma once
// The light and dark themes (View → Theme): Fusion style with one of two palettes, applied to the
// whole application. Plots take their colours from the palette (views/data/plot_palette.h), so they
// follow; colour maps do not depend on the theme (FORMATS.md §5).

#include <QPalette>
#include <QString>

namespace attnscope::app {

enum class Theme { Light, Dark };

QString themeName(Theme theme);               ///< "light" | "dark"
Theme themeFromName(const QString& name);     ///< unknown names give Light
QPalette themePalette(Theme theme);
/// Fusion style and the theme's palette for the application; plots under `root` are restyled.
void applyTheme(Theme theme, class QWidget* root = nullptr);

}  // namespace attnscope::app
