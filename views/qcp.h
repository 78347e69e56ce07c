#pragma once
// The only include of <qcustomplot.h> (CONVENTIONS.md rule 2). Debian's qcustomplot.h 2.1.0 uses
// `signals:` and `foreach`, so translation units that include this file must not define
// QT_NO_KEYWORDS or QT_NO_FOREACH.

#include <qcustomplot.h>
