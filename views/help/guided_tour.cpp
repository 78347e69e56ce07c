#include "views/help/guided_tour.h"

#include <attnscope/variant_catalog.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

// The tour is data (resources/tour/guided_tour.json, in the views' resources), like a recipe:
// its text talks about particular variants, and the code stays free of their ids.
static void initTourResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::views {

namespace {

/// "@exact" names the catalog's exact softmax; any other id must be a variant of the catalog.
QString variantOf(const QString& id) {
    if (id == QLatin1String("@exact")) return QString::fromStdString(engine::exactReference().id);
    return id;
}

std::vector<TourStep> loadTour() {
    initTourResources();
    QFile file(QStringLiteral(":/tour/guided_tour.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QJsonArray steps = QJsonDocument::fromJson(file.readAll()).object().value(QLatin1String("steps")).toArray();
    std::vector<TourStep> out;
    for (const QJsonValue& value : steps) {
        const QJsonObject o = value.toObject();
        TourStep step;
        step.view = o.value(QLatin1String("view")).toString();
        step.variant = variantOf(o.value(QLatin1String("variant")).toString());
        for (const QJsonValue& id : o.value(QLatin1String("compare")).toArray()) step.compare << variantOf(id.toString());
        step.sampleModel = o.value(QLatin1String("sampleModel")).toBool();
        step.title = o.value(QLatin1String("title")).toString();
        step.text = o.value(QLatin1String("text")).toString();
        out.push_back(std::move(step));
    }
    return out;
}

}  // namespace

const std::vector<TourStep>& guidedTour() {
    static const std::vector<TourStep> steps = loadTour();
    return steps;
}

}  // namespace attnscope::views
