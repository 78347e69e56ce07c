#include "gui/settings/param_json.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QStringList>

#include <cmath>
#include <type_traits>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ParamJson", text); }

/// A JSON scalar as the text the schema parser reads; empty when it has no text form.
QString scalarText(const QJsonValue& value) {
    switch (value.type()) {
    case QJsonValue::Bool: return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
        const double v = value.toDouble();
        // Integers print without an exponent or a fraction, so Int parameters accept 64.0 as 64.
        if (std::abs(v) < 9.0e15 && v == std::floor(v)) return QString::number(static_cast<qint64>(v));
        return QString::number(v, 'g', 17);
    }
    case QJsonValue::String: return value.toString();
    default: return {};
    }
}

QString typeName(const QJsonValue& value) {
    switch (value.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    default: return QStringLiteral("undefined");
    }
}

bool typeMatches(engine::ParamType type, const QJsonValue& value) {
    switch (type) {
    case engine::ParamType::Bool: return value.isBool();
    case engine::ParamType::Int:
    case engine::ParamType::Float: return value.isDouble();
    case engine::ParamType::Choice: return value.isString();
    case engine::ParamType::IntList:
    case engine::ParamType::FloatList: return value.isArray();
    }
    return false;
}

QString expectedText(engine::ParamType type) {
    switch (type) {
    case engine::ParamType::Bool: return tr("true or false");
    case engine::ParamType::Int:
    case engine::ParamType::Float: return tr("a number");
    case engine::ParamType::Choice: return tr("a string");
    case engine::ParamType::IntList:
    case engine::ParamType::FloatList: return tr("an array of numbers");
    }
    return {};
}

}  // namespace

QJsonValue paramToJson(const engine::ParamValue& value) {
    return std::visit(
        [](const auto& v) -> QJsonValue {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
                return v;
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                return static_cast<qint64>(v);
            } else if constexpr (std::is_same_v<T, double>) {
                return v;
            } else if constexpr (std::is_same_v<T, std::string>) {
                return QString::fromStdString(v);
            } else {
                QJsonArray array;
                for (const auto& x : v) array.append(static_cast<double>(x));
                return array;
            }
        },
        value);
}

QJsonObject paramsToJson(const engine::ParamValues& values) {
    QJsonObject object;
    for (const auto& [name, value] : values) object.insert(QString::fromStdString(name), paramToJson(value));
    return object;
}

bool paramsFromJson(const engine::VariantInfo& info, const QJsonObject& object, const QString& where,
                    engine::ParamValues* out, QString* error) {
    engine::ParamValues values;
    const QString variant = QString::fromStdString(info.id);
    for (auto it = object.begin(); it != object.end(); ++it) {
        const std::string name = it.key().toStdString();
        const engine::ParamSpec* spec = info.findParam(name);
        if (!spec) {
            QStringList known;
            for (const auto& p : info.params) known << QString::fromStdString(p.name);
            *error = tr("%1: \"%2\" is not a parameter of %3 (its parameters: %4)")
                         .arg(where, it.key(), variant, known.isEmpty() ? tr("none") : known.join(QStringLiteral(", ")));
            return false;
        }
        const QJsonValue value = it.value();
        if (!typeMatches(spec->type, value)) {
            *error = tr("%1.%2: expected %3 for the %4 parameter of %5, got %6")
                         .arg(where, it.key(), expectedText(spec->type), QString::fromLatin1(engine::paramTypeName(spec->type)),
                              variant, typeName(value));
            return false;
        }
        QString text;
        if (value.isArray()) {
            QStringList parts;
            for (const QJsonValue& element : value.toArray()) {
                if (!element.isDouble()) {
                    *error = tr("%1.%2: expected an array of numbers, found %3 in it").arg(where, it.key(), typeName(element));
                    return false;
                }
                parts << scalarText(element);
            }
            text = parts.join(QLatin1Char(','));
        } else {
            text = scalarText(value);
        }
        auto parsed = engine::parseParamValue(*spec, text.toStdString());
        if (!parsed) {
            *error = tr("%1: %2").arg(where, QString::fromStdString(parsed.error().message));
            return false;
        }
        values[name] = std::move(*parsed);
    }
    *out = std::move(values);
    return true;
}

}  // namespace attnscope::app
