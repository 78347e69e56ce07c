#include "gui/export/export_controller.h"

#include "gui/export/data_exporter.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeySequence>
#include <QMessageBox>
#include <QMimeData>

#include <algorithm>

namespace attnscope::app {

namespace {
constexpr int kMinDpi = 72;
constexpr int kMaxDpi = 1200;
constexpr int kClipboardDpi = 150;  // pasted figures land in slides and chats: keep them light
}  // namespace

ExportController::ExportController(QWidget* dialogParent, ViewFn view, SubjectFn subject, bool showDialogs)
    : QObject(dialogParent), m_parent(dialogParent), m_view(std::move(view)), m_subject(std::move(subject)),
      m_showDialogs(showDialogs) {
    m_exportFigure = new QAction(tr("Export &Figure…"), this);
    m_exportFigure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportFigure->setToolTip(tr("Save the shown view as PNG, SVG or PDF with a title, caption and a JSON sidecar"));
    m_exportData = new QAction(tr("Export &Data…"), this);
    m_exportData->setToolTip(tr("Save the result as safetensors, or the shown head's weights as CSV"));
    m_copyFigure = new QAction(tr("&Copy Figure"), this);
    m_copyFigure->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    m_exportSlide = new QAction(tr("Export &Slide (16:9)…"), this);
    m_exportSlide->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    m_exportSlide->setToolTip(tr("The shown view on a 16:9 page for a lecture slide: one large title, large text, "
                                 "tight margins (the caption stays in the sidecar)"));
    m_exportAllHeads = new QAction(tr("Export &All Heads…"), this);
    m_exportAllHeads->setToolTip(tr("Every head of the shown layer side by side (the heads grid), as PNG, SVG or PDF"));
    m_exportAllHeads->setEnabled(false);  // until setAllHeads()
    connect(m_exportFigure, &QAction::triggered, this, &ExportController::exportFigureInteractive);
    connect(m_exportSlide, &QAction::triggered, this,
            [this] { exportInteractive(m_view, m_subject, true, tr("Export Slide (16:9)")); });
    connect(m_exportAllHeads, &QAction::triggered, this,
            [this] { exportInteractive(m_allHeadsView, m_allHeadsSubject, false, tr("Export All Heads")); });
    connect(m_exportData, &QAction::triggered, this, &ExportController::exportDataInteractive);
    connect(m_copyFigure, &QAction::triggered, this, &ExportController::copyFigureInteractive);
}

ExportController::~ExportController() = default;

void ExportController::setDpi(int dpi) { m_dpi = std::clamp(dpi, kMinDpi, kMaxDpi); }

void ExportController::setAllHeads(ViewFn view, SubjectFn subject) {
    m_allHeadsView = std::move(view);
    m_allHeadsSubject = std::move(subject);
    m_exportAllHeads->setEnabled(static_cast<bool>(m_allHeadsView));
}

FigureRequest ExportController::figureRequest(FigureFormat format, int dpi) const {
    return figureRequest(m_subject, format, dpi, false);
}

FigureRequest ExportController::figureRequest(const SubjectFn& subjectFn, FigureFormat format, int dpi, bool slide) const {
    const FigureSubject subject = subjectFn();
    FigureRequest request;
    request.format = format;
    request.dpi = dpi;
    request.slide = slide;
    request.title = FigureMetadata::title(subject);
    request.caption = FigureMetadata::caption(subject);
    request.sidecar = FigureMetadata::sidecar(subject);
    return request;
}

FigureOutcome ExportController::exportFigureTo(const QString& path, int dpi, bool slide) {
    return exportTo(m_view(), m_subject, path, dpi, slide);
}

FigureOutcome ExportController::exportAllHeadsTo(const QString& path, int dpi, bool slide) {
    if (!m_allHeadsView) {
        FigureOutcome out;
        out.error = tr("There is no heads grid to export.");
        return out;
    }
    return exportTo(m_allHeadsView(), m_allHeadsSubject, path, dpi, slide);
}

FigureOutcome ExportController::exportTo(QWidget* view, const SubjectFn& subject, const QString& path, int dpi, bool slide) const {
    const auto format = FigureExporter::formatForPath(path);
    if (!format) {
        FigureOutcome out;
        out.error = tr("Cannot export to %1: use a .png, .svg or .pdf name.").arg(QDir::toNativeSeparators(path));
        return out;
    }
    return FigureExporter::exportFigure(view, path, figureRequest(subject, *format, dpi, slide));
}

void ExportController::setDataExport(QWidget* view, DataWriteFn write, const QString& filters) {
    m_dataExports[view] = {std::move(write), filters};
}

QString ExportController::exportDataTo(const QString& path) {
    const QString shown = QDir::toNativeSeparators(path);
    if (const auto own = m_dataExports.find(m_view()); own != m_dataExports.end()) {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix != QLatin1String("safetensors") && suffix != QLatin1String("csv"))
            return tr("Cannot export to %1: use a .safetensors or .csv name.").arg(shown);
        return own->second.write(path);
    }
    const FigureSubject subject = m_subject();
    if (!subject.run || subject.variantIndexes.empty()) return tr("Nothing to export yet: run a variant first.");
    const int index = subject.variantIndexes.front();
    if (index < 0 || index >= static_cast<int>(subject.run->results.size()))
        return tr("Nothing to export yet: run a variant first.");
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("safetensors"))
        return DataExporter::exportSafetensors(path, *subject.run, static_cast<std::size_t>(index));
    if (suffix == QLatin1String("csv"))
        return DataExporter::exportHeadCsv(path, subject.run->results[static_cast<std::size_t>(index)], std::max(subject.head, 0),
                                           subject.run->input.tokens);
    return tr("Cannot export to %1: use a .safetensors or .csv name.").arg(shown);
}

QString ExportController::copyFigure() {
    QString error;
    QMimeData* mime = FigureExporter::mimeData(m_view(), figureRequest(FigureFormat::Png, kClipboardDpi), &error);
    if (!mime) return error;
    QApplication::clipboard()->setMimeData(mime);  // the clipboard takes ownership
    return {};
}

QString ExportController::suggestedName(const SubjectFn& subjectFn, const QString& suffix, bool slide) const {
    const FigureSubject subject = subjectFn();
    QString name = QStringLiteral("attnscope-%1").arg(QString(subject.view).replace(QLatin1Char(' '), QLatin1Char('-')));
    if (subject.run && !subject.variantIndexes.empty() && subject.variantIndexes.front() < static_cast<int>(subject.run->results.size()))
        name += QLatin1Char('-') + QString::fromStdString(subject.run->results[static_cast<std::size_t>(subject.variantIndexes.front())].variantId);
    if (subject.head >= 0) name += QStringLiteral("-head%1").arg(subject.head);
    if (slide) name += QStringLiteral("-slide");
    const QString folder = m_lastFolder.isEmpty() ? QDir::homePath() : m_lastFolder;
    return QDir(folder).filePath(name + QLatin1Char('.') + suffix);
}

void ExportController::report(const QString& error, const QString& done) {
    if (error.isEmpty()) {
        Q_EMIT exported(done);
        return;
    }
    Q_EMIT exportFailed(error);
    if (!m_showDialogs) return;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Export failed"), error, QMessageBox::Ok, m_parent);
    box->setTextFormat(Qt::PlainText);  // paths and variant names are shown as data
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void ExportController::exportFigureInteractive() { exportInteractive(m_view, m_subject, false, tr("Export Figure")); }

void ExportController::exportInteractive(const ViewFn& view, const SubjectFn& subject, bool slide, const QString& caption) {
    if (!view) return;
    QString filter = tr("PNG image (*.png)");
    const QString path = QFileDialog::getSaveFileName(m_parent, caption, suggestedName(subject, QStringLiteral("png"), slide),
                                                      tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"),
                                                      &filter);
    if (path.isEmpty()) return;
    m_lastFolder = QFileInfo(path).absolutePath();
    QString target = path;
    if (!FigureExporter::formatForPath(target)) {
        // The dialog's filter decides when the name has no known suffix.
        target += filter.contains(QLatin1String("*.svg")) ? QStringLiteral(".svg")
                  : filter.contains(QLatin1String("*.pdf")) ? QStringLiteral(".pdf")
                                                            : QStringLiteral(".png");
    }
    if (FigureExporter::formatForPath(target) == FigureFormat::Png) {
        bool ok = false;
        const int dpi = QInputDialog::getInt(m_parent, tr("PNG Resolution"),
                                            tr("Dots per inch (150 for a slide, 300 for print):"), m_dpi, kMinDpi, kMaxDpi, 50, &ok);
        if (!ok) return;
        setDpi(dpi);
    }
    const FigureOutcome out = exportTo(view(), subject, target, m_dpi, slide);
    report(out.error, tr("Saved %1 (%2 × %3) and its sidecar.")
                          .arg(QDir::toNativeSeparators(target))
                          .arg(out.size.width())
                          .arg(out.size.height()));
}

void ExportController::exportDataInteractive() {
    QString filter;
    const auto own = m_dataExports.find(m_view());
    const QString filters = own != m_dataExports.end()
                                ? own->second.filters
                                : tr("Result as safetensors (*.safetensors);;Shown head's weights as CSV (*.csv)");
    const QString path =
        QFileDialog::getSaveFileName(m_parent, tr("Export Data"), suggestedName(m_subject, QStringLiteral("safetensors"), false), filters, &filter);
    if (path.isEmpty()) return;
    m_lastFolder = QFileInfo(path).absolutePath();
    QString target = path;
    const QString suffix = QFileInfo(target).suffix().toLower();
    if (suffix != QLatin1String("safetensors") && suffix != QLatin1String("csv"))
        target += filter.contains(QLatin1String("*.csv")) ? QStringLiteral(".csv") : QStringLiteral(".safetensors");
    report(exportDataTo(target), tr("Saved %1.").arg(QDir::toNativeSeparators(target)));
}

void ExportController::copyFigureInteractive() { report(copyFigure(), tr("Figure copied (PNG and SVG).")); }

}  // namespace attnscope::app
