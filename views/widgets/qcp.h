#pragma once
// The only include of <qcustomplot.h> (CONVENTIONS.md rule 2). Debian's qcustomplot.h 2.1.0 uses
// `signals:` and `foreach`, so translation units that include this file must not define
// QT_NO_KEYWORDS or QT_NO_FOREACH.

#include <qcustomplot.h>

namespace attnscope::views {

/// Raw access to a QCPColorMapData's cells and alpha map, which QCustomPlot 2.1 only offers one
/// cell at a time. NOTE: setCell()/setAlpha() per cell (library calls with bounds checks and a
/// bounds update each) were a third of building a 2048² map; pointers to the protected members,
/// formed through this derived class, may be applied to any QCPColorMapData. Never instantiated.
struct ColorMapDataAccess : QCPColorMapData {
    /// [valueSize][keySize] row-major (value = query row, key = key column); null when empty.
    static double* cells(QCPColorMapData& d) { return d.*(&ColorMapDataAccess::mData); }
    /// Same layout; null until setAlpha() was called once (it allocates an opaque map).
    static unsigned char* alpha(QCPColorMapData& d) { return d.*(&ColorMapDataAccess::mAlpha); }
    /// After writing through cells()/alpha(): the colour map rebuilds its image on the next replot.
    static void markModified(QCPColorMapData& d, const QCPRange& bounds) {
        d.*(&ColorMapDataAccess::mDataBounds) = bounds;
        d.*(&ColorMapDataAccess::mDataModified) = true;
    }
};

}  // namespace attnscope::views
