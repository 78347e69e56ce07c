#include "views/data/token_label.h"

#include <QFontMetricsF>
#include <QObject>
#include <QStringDecoder>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

QString tokenLabel(const std::string& bytes, int maxChars) {
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder.decode(QByteArrayView(bytes.data(), static_cast<qsizetype>(bytes.size())));
    if (decoder.hasError()) {
        QString hex;
        for (unsigned char c : bytes) hex += QStringLiteral("0x%1").arg(c, 2, 16, QLatin1Char('0'));
        text = hex;
    }
    QString out;
    out.reserve(text.size());
    for (const QChar c : text) {
        if (c == QLatin1Char(' '))
            out += QChar(0x2423);
        else if (c == QLatin1Char('\n'))
            out += QChar(0x23CE);
        else if (c == QLatin1Char('\t'))
            out += QChar(0x21E5);
        else if (c == QLatin1Char('\r'))
            out += QStringLiteral("\\r");
        else if (c.category() == QChar::Other_Control)
            out += QStringLiteral("0x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    if (maxChars > 1 && out.size() > maxChars) out = out.left(maxChars - 1) + QChar(0x2026);
    return out;
}

QString qkvSourceText(const engine::RunResult& run) {
    if (run.modelFolder.empty() || run.modelLayer < 0) return {};
    QString folder = QString::fromStdString(run.modelFolder);
    while (folder.size() > 1 && folder.endsWith(QLatin1Char('/'))) folder.chop(1);
    const QString name = folder.mid(folder.lastIndexOf(QLatin1Char('/')) + 1);
    return QObject::tr("model %1, layer %2").arg(name).arg(run.modelLayer);
}

QString resultName(const engine::RunResult& run, std::size_t index, const QHash<QString, QString>& variantNames) {
    if (index >= run.results.size()) return {};
    const QString id = QString::fromStdString(run.results[index].variantId);
    const QString name = variantNames.value(id, id);
    if (run.modelFolder.empty() || run.modelLayer < 0) return name;
    if (static_cast<int>(index) == run.ownAttention) {
        const QString family = QString::fromStdString(run.modelFamilyName);
        return family.isEmpty() ? QObject::tr("own attention of layer %1").arg(run.modelLayer)
                                : QObject::tr("own attention of layer %1 (%2)").arg(run.modelLayer).arg(family);
    }
    return QObject::tr("%1 on layer %2's Q/K").arg(name).arg(run.modelLayer);
}

int tokenLabelStep(double pixels, double cells, const QFont& font) {
    const double perCell = pixels / std::max(1.0, cells);
    const double needed = QFontMetricsF(font).height() * 1.1;
    return perCell > 0 ? std::max(1, static_cast<int>(std::ceil(needed / perCell))) : 1;
}

QString tokenUnit(const engine::TokenizedInput& input) {
    if (input.tokens.empty()) return QObject::tr("positions");
    if (input.kind == engine::TokenizerKind::Model) return QObject::tr("tokens");
    return QString::fromLatin1(engine::tokenizerName(input.kind));
}

}  // namespace attnscope::views
