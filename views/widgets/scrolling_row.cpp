#include "views/widgets/scrolling_row.h"

#include <QScrollArea>
#include <QScrollBar>
#include <QWidget>

namespace attnscope::views {

QScrollArea* scrollingRow(QWidget* row, QWidget* parent) {
    auto* area = new QScrollArea(parent);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidgetResizable(true);
    area->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    area->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    area->setWidget(row);
    area->setProperty("attnscopeExportSkip", row->property("attnscopeExportSkip"));
    // The row's height, and room for the bar when it shows (so it never covers the controls).
    area->setFixedHeight(row->sizeHint().height() + area->horizontalScrollBar()->sizeHint().height());
    area->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    return area;
}

}  // namespace attnscope::views
