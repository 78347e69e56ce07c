#pragma once
// The left column of a Cost-tab measurement page: the sizes to measure (a list the user types,
// its error under the field), any further settings the page adds, Measure and Cancel, the progress
// and the status line. The page keeps its plot and samples; this keeps the sweep's controls.

#include <QString>
#include <QVector>
#include <QWidget>

class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace attnscope::views {

/// How a page names the sizes it measures.
struct MeasureSizes {
    QString label;       ///< the field's label, with its shortcut ("&Tokens")
    QString defaults;    ///< "256, 1024, 4096, 16384"
    int most = 1;        ///< the largest size accepted
    QString one;         ///< "a token count" (in "“x” is not a token count")
    QString many;        ///< "token counts" (in "no token counts: type some")
    QString tip;         ///< the field's tooltip
    QString measureTip;  ///< the Measure button's tooltip
    QString objectName;  ///< the field's (its error label: objectName + "Error")
    int least = 1;       ///< the smallest size accepted
};

class MeasureControls : public QWidget {
    Q_OBJECT
public:
    /// "64, 128 256" → sorted, deduplicated sizes sizes.least … sizes.most; empty with *error on bad input.
    static QVector<int> parseSizes(const QString& text, const MeasureSizes& sizes, QString* error);

    MeasureControls(MeasureSizes sizes, QWidget* parent = nullptr);

    /// Where a page adds its further settings (under the sizes field).
    QFormLayout* form() const { return m_form; }
    QLineEdit* sizesEdit() const { return m_sizes; }
    QPushButton* measureButton() const { return m_measure; }
    QPushButton* cancelButton() const { return m_cancel; }
    QProgressBar* progressBar() const { return m_progress; }
    QString status() const;
    /// The status line (and its tooltip), e.g. what is missing before a sweep can start.
    void setStatus(const QString& text, const QString& tip = {});
    bool isRunning() const { return m_running; }
    /// The typed sizes, or empty with the reason shown under the field.
    QVector<int> sizes();

    void setStarted(int total);
    void setProgress(int done, int total, const QString& text);
    void setFinished(const QString& message);

Q_SIGNALS:
    /// Measure pressed (or Return in the field) while nothing runs.
    void measureWanted();
    void cancelRequested();

private:
    void updateControls();

    MeasureSizes m_spec;
    QFormLayout* m_form = nullptr;
    QLineEdit* m_sizes = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_measure = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    bool m_running = false;
};

}  // namespace attnscope::views
