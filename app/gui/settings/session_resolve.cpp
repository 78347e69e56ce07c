#include "gui/settings/session_resolve.h"

#include "gui/settings/param_json.h"

#include <QCoreApplication>

namespace attnscope::app {

namespace {

const engine::VariantInfo* findInfo(const std::vector<engine::VariantInfo>& variants, const QString& id) {
    for (const auto& v : variants)
        if (QString::fromStdString(v.id) == id) return &v;
    return nullptr;
}

}  // namespace

std::optional<ResolvedSession> resolveSession(const SessionState& session, const std::vector<engine::VariantInfo>& variants,
                                              int maxCompared, QString* error) {
    const auto refuse = [error](const QString& message) {
        *error = message;
        return std::nullopt;
    };
    ResolvedSession out;
    out.variant = findInfo(variants, session.variantId);
    // A model layer's own attention is no variant of the list (RunSettingsPanel::ownAttentionId).
    out.ownAttention = session.variantId == QLatin1String("@own") && !session.modelFolder.isEmpty();
    if (!out.variant && !out.ownAttention)
        return refuse(QCoreApplication::translate("Session", "The session uses the variant \"%1\", which this AttnScope "
                                                             "does not have. Nothing was changed.")
                          .arg(session.variantId));
    QString problem;
    if (out.variant && !paramsFromJson(*out.variant, session.params, QStringLiteral("variant.params"), &out.params, &problem))
        return refuse(QCoreApplication::translate("Session", "The session's parameters do not fit: %1. Nothing was changed.")
                          .arg(problem));
    if (session.compare.size() > maxCompared)
        return refuse(QCoreApplication::translate("Session", "The session compares %1 variants; at most %2 fit. Nothing was changed.")
                          .arg(session.compare.size())
                          .arg(maxCompared));
    for (qsizetype row = 0; row < session.compare.size(); ++row) {
        const SessionVariant& v = session.compare[row];
        const engine::VariantInfo* info = findInfo(variants, v.id);
        if (!info)
            return refuse(QCoreApplication::translate("Session", "The session compares with the variant \"%1\", which this "
                                                                 "AttnScope does not have. Nothing was changed.")
                              .arg(v.id));
        engine::ParamValues values;
        if (!paramsFromJson(*info, v.params, QStringLiteral("compare[%1].params").arg(row), &values, &problem))
            return refuse(QCoreApplication::translate("Session", "The session's parameters do not fit: %1. Nothing was changed.")
                              .arg(problem));
        out.compared.emplace_back(info, std::move(values));
    }
    return out;
}

}  // namespace attnscope::app
