#pragma once
// What each tab of the window shows and how to read it, and what a variant changes and costs,
// written for a student; the help panel (F1) shows the current tab's and variant's entries.

#include <attnscope/variant_info.h>

#include <QString>
#include <QStringList>

namespace attnscope::views {

struct ViewGuide {
    QString title;  ///< "Heatmap"
    QString shows;  ///< what the picture is
    QString read;   ///< how to read it
    QString tips;   ///< what to try
};

/// The tab keys, in tab order: heatmap, mask, compare, diagnostics, links, cost, atlas, experts, image.
QStringList viewGuideKeys();
/// The guide of a tab key; an empty guide for an unknown key.
ViewGuide viewGuide(const QString& key);

/// The help panel's page for a tab and a variant (rich text, every engine string escaped).
QString helpPageHtml(const QString& viewKey, const engine::VariantInfo* variant);

/// The window's keyboard shortcuts as an HTML table.
QString shortcutsHtml();

}  // namespace attnscope::views
