#pragma once
// For a variant that approximates softmax (performer, linear, linformer) run beside an exact
// `full` result on the same Q, K, V: implied attention beside exact softmax for the selected head,
// the error map (implied − exact, diverging, symmetric range), the per-row L1 error, and a curve
// of error against nb_features (performer) or k (linformer) that the app computes on request.

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QPointer>
#include <QSize>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>
#include <string>

class QCustomPlot;
class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace attnscope::views {

class InspectionState;

class ApproximationView : public ResultPage {
    Q_OBJECT
public:
    /// Largest side drawn cell by cell; larger matrices keep the entry of largest |value| of each
    /// block, so the sign and peak of errors survive pooling.
    static constexpr int kMaxDisplaySide = 512;

    explicit ApproximationView(QWidget* parent = nullptr);
    ~ApproximationView() override;

    /// True for the variants whose weights are an implied approximation of softmax.
    static bool approximatesSoftmax(const std::string& variantId);
    /// Ids of the catalog's variants that approximate softmax.
    static QStringList approximatingVariants();
    /// The size parameter the error curve sweeps ("nb_features", "k"); empty when there is none.
    static QString sweepParameter(const std::string& variantId);
    /// Mean over heads and query rows of Σ_j |implied_ij − exact_ij|; NaN when either result kept
    /// no weights or the shapes differ.
    static double meanRowL1Error(const engine::AttentionResult& approx, const engine::AttentionResult& exact);

    /// Follows state->head(). The approximation is state->resultIndex() when it approximates
    /// softmax, else the first such result; the exact reference is the run's first `full` result.

    // Data accessors for tests (plotted data, display cells; see kMaxDisplaySide).
    bool hasComparison() const { return m_shownHead >= 0; }
    QString message() const;
    int shownHead() const { return m_shownHead; }
    QString approximationId() const { return m_approxId; }
    QSize dataSize() const;  ///< width = key cells, height = query cells
    double impliedCell(int query, int key) const;
    double exactCell(int query, int key) const;
    double errorCell(int query, int key) const;
    /// The error map's colour range is [-errorRangeLimit(), +errorRangeLimit()].
    double errorRangeLimit() const;
    QVector<double> rowL1Errors() const;
    QVector<double> curveValues() const;
    QVector<double> curveErrors() const;
    QString curveStatus() const;
    QLineEdit* curveValuesEdit() const { return m_curveEdit; }
    QPushButton* curveButton() const { return m_curveButton; }
    /// "Q, K at norm d^¼" for the curve (Performer): where FAVOR+'s estimate converges.
    QCheckBox* curveScaleBox() const { return m_curveScale; }
    /// Why the implied weights are flat when they are: the share of key features under
    /// feature_eps and the keys' scaled norm (Performer); empty otherwise.
    QString flatWeightsNote() const { return m_flatNote; }
    QCustomPlot* errorPlot() const { return m_errorPlot; }
    QCustomPlot* curvePlot() const { return m_curvePlot; }

public Q_SLOTS:
    /// Parses the values field and emits errorCurveRequested (the Compute button does this).
    void requestErrorCurve();
    /// The app's answer: mean per-row L1 error of `variantId` at each value of `paramName`.
    void setErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values,
                       const QVector<double>& errors);
    /// The curve's run failed or was cancelled.
    void setErrorCurveFailed(const QString& message);

Q_SIGNALS:
    /// Intent: compute the error of `variantId` (other parameters as in the current form) for each
    /// value of `paramName` against exact softmax on the same input.
    /// `qkNorm` > 0: every query and key row rescaled to that norm first (ProjectionSpec::qkNorm).
    void errorCurveRequested(const QString& variantId, const QString& paramName, const QVector<double>& values,
                             double qkNorm);

private:
    void rebuild() override;
    void showMessage(const QString& text);
    void updateCurveControls();

    QLabel* m_info = nullptr;
    QWidget* m_body = nullptr;
    QCustomPlot* m_impliedPlot = nullptr;
    QCustomPlot* m_exactPlot = nullptr;
    QCustomPlot* m_errorPlot = nullptr;
    QCustomPlot* m_rowPlot = nullptr;
    QCustomPlot* m_curvePlot = nullptr;
    QLineEdit* m_curveEdit = nullptr;
    QPushButton* m_curveButton = nullptr;
    QCheckBox* m_curveScale = nullptr;
    QString m_flatNote;
    double m_curveQkNorm = 0;  // the norm the curve being computed rescales Q, K to
    QLabel* m_curveStatus = nullptr;
    QString m_approxId;
    QString m_curveParam;  // parameter the values field currently holds values for
    bool m_curveBusy = false;
    int m_shownHead = -1;
    double m_errorLimit = 0;
};

}  // namespace attnscope::views
