#include "views/data/param_text.h"

#include <QCoreApplication>

namespace attnscope::views {

QString paramAssignment(const std::string& name, const engine::ParamValue& value) {
    const QString text = QString::fromStdString(engine::formatParamValue(value));
    return QString::fromStdString(name) + QLatin1Char('=') +
           (text.isEmpty() ? QCoreApplication::translate("ParamText", "none") : text);
}

}  // namespace attnscope::views
