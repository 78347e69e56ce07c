#include "gui/export/data_exporter.h"

#include "views/data/head_matrix.h"
#include "views/data/token_label.h"

#include <attnscope/result_file.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("DataExporter", text); }

// "index:token" as one quoted CSV field (visible stand-ins for spaces and control characters);
// the index alone when there is no token.
QByteArray csvLabel(std::int64_t index, const std::vector<engine::Token>& tokens, std::int64_t count) {
    QByteArray field = QByteArray::number(index);
    if (static_cast<std::int64_t>(tokens.size()) != count || index >= count) return field;
    const QString text = views::tokenLabel(tokens[static_cast<std::size_t>(index)].text, 40);
    field += ':' + text.toUtf8();
    field.replace('"', "\"\"");
    return '"' + field + '"';
}

}  // namespace

QString DataExporter::exportSafetensors(const QString& path, const engine::RunResult& run, std::size_t variantIndex) {
    const QString shown = QDir::toNativeSeparators(path);
    if (variantIndex >= run.results.size()) return tr("Cannot write %1: the result has no variant %2.").arg(shown).arg(variantIndex);
    // NOTE: engine::writeResultFile reads `output` and the weights unchecked; engine results
    // always have both, hand-made ones might not.
    const engine::AttentionResult& r = run.results[variantIndex];
    if (r.output.empty() || !r.weights) return tr("Cannot write %1: the result lacks its output or weights.").arg(shown);
    // The engine writes through a temporary file; check the folder first for a clearer message.
    const QFileInfo folder(QFileInfo(path).absolutePath());
    if (!folder.isDir()) return tr("Cannot write %1: the folder %2 does not exist.").arg(shown, QDir::toNativeSeparators(folder.filePath()));
    const auto written = engine::writeResultFile(QFile::encodeName(path).toStdString(), run, variantIndex);
    if (!written) return tr("Cannot write %1: %2").arg(shown, QString::fromStdString(written.error().message));
    return {};
}

QString DataExporter::exportHeadCsv(const QString& path, const engine::AttentionResult& result, int head,
                                   const std::vector<engine::Token>& tokens) {
    const QString shown = QDir::toNativeSeparators(path);
    if (head < 0 || head >= result.heads) return tr("Cannot write %1: the result has no head %2.").arg(shown).arg(head);
    if (!result.weights) return tr("Cannot write %1: this result has no weights.").arg(shown);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return tr("Cannot write %1: %2").arg(shown, file.errorString());
    // Queries are the input's tokens; keys are too unless the keys hold more (memory).
    const std::int64_t queryTokens = result.n, keyTokens = result.m == result.n ? result.m : -1;
    QByteArray line = "query \\ key";
    for (std::int64_t j = 0; j < result.m; ++j) line += ',' + csvLabel(j, tokens, keyTokens);
    line += '\n';
    if (file.write(line) != line.size()) {
        file.cancelWriting();
        return tr("Cannot write %1: %2").arg(shown, file.errorString());
    }
    for (std::int64_t row0 = 0; row0 < result.n; row0 += kCsvChunkRows) {
        const views::HeadMatrix chunk = views::HeadMatrix::fromRegion(result, head, row0, 0, kCsvChunkRows, result.m);
        for (int i = 0; i < chunk.rows(); ++i) {
            line = csvLabel(row0 + i, tokens, queryTokens);
            for (int j = 0; j < chunk.cols(); ++j) line += ',' + QByteArray::number(chunk.at(i, j), 'g', 9);
            line += '\n';
            if (file.write(line) != line.size()) {
                file.cancelWriting();
                return tr("Cannot write %1: %2").arg(shown, file.errorString());
            }
        }
    }
    if (!file.commit()) return tr("Cannot write %1: %2").arg(shown, file.errorString());
    return {};
}

}  // namespace attnscope::app
