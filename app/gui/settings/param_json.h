#pragma once
// Variant parameters as typed JSON values, shared by recipes and sessions. Values are checked
// against the variant's schema (engine::parseParamValue), so a file gets the same validation and
// the same messages as the CLI's --param and the GUI's forms.

#include <attnscope/variant_info.h>

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace attnscope::app {

/// bool → true/false, int and float → number, choice → string, lists → arrays of numbers.
QJsonValue paramToJson(const engine::ParamValue& value);
QJsonObject paramsToJson(const engine::ParamValues& values);

/// Checks every entry of `object` against `info`'s schema. `where` names the object in messages
/// ("figures[2].params"). Returns false and sets *error on an unknown name, a value of the wrong
/// type or out of range; nothing is written to *out then.
bool paramsFromJson(const engine::VariantInfo& info, const QJsonObject& object, const QString& where,
                    engine::ParamValues* out, QString* error);

}  // namespace attnscope::app
