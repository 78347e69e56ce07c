#pragma once
// The window's runs on the engine thread. A run is made of the settings column's choices: the
// main variant, and for the Compare tab the compared rows with exact softmax beside them, for the
// Diagnostics tab the exact reference of an approximating variant. The approximation view's error
// curve is a job of its own. Only the latest job's progress, result and failure come out; a
// compare run over budget because of the added exact run is retried without it; a parameter's
// error goes under its field. It also says whether the shown result is out of date.

#include "common/run_plan.h"

#include <attnscope/types.h>

#include <QObject>
#include <QString>
#include <QVector>

#include <memory>

namespace attnscope::views {
class ApproximationView;
}

namespace attnscope::app {

class EngineRunner;
class ModelController;
class RunSettingsPanel;

class RunController : public QObject {
    Q_OBJECT
public:
    /// The tab a run is for: what it holds beside the main variant.
    enum class Purpose { Views, Compare, Diagnostics };

    RunController(EngineRunner* runner, RunSettingsPanel* inputs, ModelController* models,
                  views::ApproximationView* approximation, QObject* parent);

    /// Starts a run of the column's choices, superseding the one in flight. Returns its job, 0
    /// when a list parameter does not parse (its field says why; refused() says it too).
    quint64 start(Purpose purpose, bool userInitiated);
    quint64 currentJob() const { return m_job; }
    /// True when a run for `purpose` would show what `shown` lacks: the compared rows in their
    /// order, or the exact reference beside the approximating variant.
    bool shownLacks(Purpose purpose, const engine::RunResult* shown) const;
    /// True while the engine runs a request made for `purpose`.
    bool runningFor(Purpose purpose) const;
    /// The shown result did not come from the inputs (a result file): never out of date.
    void forgetShownInputs() { m_shownSignature.clear(); }
    /// True when the inputs differ from those of the shown result (false before the first).
    bool shownOutOfDate() const;

public Q_SLOTS:
    /// The approximation view's intent: one request holding the variant once per value, then
    /// the exact reference. Refused (the view says why) while a run is in flight.
    void startErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values, double qkNorm);

Q_SIGNALS:
    void started(const QString& message);
    void refused(const QString& message);
    void progressChanged(int permille, const QString& stage);
    /// A run or the error curve ended, whatever the outcome (emitted before what it gave).
    void ended();
    /// The latest run's result: its first `comparePanes` variants are the Compare tab's panes;
    /// `exactNote` says why they lack the exact reference.
    void resultReady(quint64 job, std::shared_ptr<const engine::RunResult> result, int comparePanes,
                     const QString& exactNote);
    /// The latest run failed (or was cancelled); `besideField` when a parameter's field shows why.
    void failed(quint64 job, const QString& message, int code, bool userInitiated, bool besideField);
    /// The error curve is drawn or could not be computed: the status bar's message.
    void curveEnded(const QString& message, const QString& details);
    /// An input of the column changed (the shown result may be out of date now).
    void inputsChanged();
    /// The fix offered beside a parameter's field was taken: run again as the user asked.
    void rerunRequested();

private:
    void finished(quint64 job, std::shared_ptr<const engine::RunResult> result);
    void jobFailed(quint64 job, const QString& message, int code);
    void curveFinished(const engine::RunResult& result);
    /// Shows an engine error that names a parameter of the main variant under that parameter's
    /// field (with the fix it suggests as a button); false when it names none.
    bool showParameterProblem(const QString& message);
    /// The inputs a run is made from, as one comparable string.
    QString inputSignature() const;
    void watchInputs();

    EngineRunner* m_runner = nullptr;
    RunSettingsPanel* m_inputs = nullptr;
    ModelController* m_models = nullptr;
    views::ApproximationView* m_approximation = nullptr;
    ComparePlan m_comparePlan;  // what the Compare tab's requests hold beside the main variant
    quint64 m_job = 0;
    Purpose m_purpose = Purpose::Views;
    bool m_byUser = false;
    bool m_compares = false;  // the latest request holds the compared rows
    bool m_hasExact = false;  // the latest request holds the Diagnostics tab's exact reference
    QString m_runSignature;    // inputs of the run in flight
    QString m_shownSignature;  // inputs of the shown result
    quint64 m_curveJob = 0;    // the error curve's job while it runs, else 0
    QString m_curveVariant, m_curveParam;
    QVector<double> m_curveValues;
};

}  // namespace attnscope::app
