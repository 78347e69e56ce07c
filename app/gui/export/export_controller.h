#pragma once
// File → Export Figure… (Ctrl+E), Export Data…, Copy Figure (Ctrl+Shift+C) for whichever view
// tab is shown. The actions ask for a path (and DPI) and call the headless entry points below,
// which tests call directly. Errors reach the user once: one plain-text dialog (when enabled) and
// the exportFailed signal (the main window's status bar).

#include "gui/export/figure_exporter.h"
#include "gui/export/figure_metadata.h"

#include <QObject>
#include <QString>

#include <functional>
#include <map>

class QAction;
class QWidget;

namespace attnscope::app {

class ExportController : public QObject {
    Q_OBJECT
public:
    /// The shown view and a description of it, read when an export starts (GUI thread).
    using ViewFn = std::function<QWidget*()>;
    using SubjectFn = std::function<FigureSubject()>;

    ExportController(QWidget* dialogParent, ViewFn view, SubjectFn subject, bool showDialogs);
    ~ExportController() override;

    QAction* exportFigureAction() const { return m_exportFigure; }
    QAction* exportDataAction() const { return m_exportData; }
    QAction* copyFigureAction() const { return m_copyFigure; }
    /// File ▸ Export Slide (16:9)…: the shown view in the slide layout (FigureRequest::slide).
    QAction* exportSlideAction() const { return m_exportSlide; }
    /// File ▸ Export All Heads…: the heads grid (every head of the layer), set by setAllHeads().
    QAction* exportAllHeadsAction() const { return m_exportAllHeads; }
    /// What Export All Heads draws and how it is described.
    void setAllHeads(ViewFn view, SubjectFn subject);
    /// Export Data while `view` is shown writes what `write(path)` writes (its data rather than
    /// the run's): "" or the message. `filters` are the file dialog's, .safetensors first.
    using DataWriteFn = std::function<QString(const QString& path)>;
    void setDataExport(QWidget* view, DataWriteFn write, const QString& filters);

    int dpi() const { return m_dpi; }
    void setDpi(int dpi);
    QString lastFolder() const { return m_lastFolder; }
    void setLastFolder(const QString& folder) { m_lastFolder = folder; }

    /// Headless: the shown view to `path` (format by suffix) at `dpi`, with title, caption and
    /// sidecar from the subject.
    FigureOutcome exportFigureTo(const QString& path, int dpi, bool slide = false);
    /// Headless: the heads grid to `path`, as exportFigureTo.
    FigureOutcome exportAllHeadsTo(const QString& path, int dpi, bool slide = false);
    /// Headless: .safetensors = the shown variant's whole result; .csv = the shown head's weights
    /// (or what setDataExport gives for the shown view). Returns "" on success, else the message.
    QString exportDataTo(const QString& path);
    /// The figure as image/png + image/svg+xml on the clipboard; empty string on success.
    QString copyFigure();

public Q_SLOTS:
    void exportFigureInteractive();
    void exportDataInteractive();
    void copyFigureInteractive();

Q_SIGNALS:
    /// A file was written or the clipboard filled: a short message for the status bar.
    void exported(const QString& message);
    void exportFailed(const QString& message);

private:
    FigureRequest figureRequest(FigureFormat format, int dpi) const;
    FigureRequest figureRequest(const SubjectFn& subject, FigureFormat format, int dpi, bool slide) const;
    FigureOutcome exportTo(QWidget* view, const SubjectFn& subject, const QString& path, int dpi, bool slide) const;
    /// The dialogs of every figure export: a file name, a DPI for PNG, then the export.
    void exportInteractive(const ViewFn& view, const SubjectFn& subject, bool slide, const QString& caption);
    QString suggestedName(const SubjectFn& subject, const QString& suffix, bool slide) const;
    void report(const QString& error, const QString& done);

    QWidget* m_parent = nullptr;
    ViewFn m_view;
    SubjectFn m_subject;
    bool m_showDialogs = true;
    int m_dpi = FigureExporter::kDefaultDpi;
    QString m_lastFolder;
    QAction* m_exportFigure = nullptr;
    QAction* m_exportData = nullptr;
    QAction* m_copyFigure = nullptr;
    QAction* m_exportSlide = nullptr;
    QAction* m_exportAllHeads = nullptr;
    ViewFn m_allHeadsView;
    SubjectFn m_allHeadsSubject;
    struct DataExport {
        DataWriteFn write;
        QString filters;
    };
    std::map<QWidget*, DataExport> m_dataExports;  // views that export data of their own
};

}  // namespace attnscope::app
