#pragma once
// The Atlas tab's coverage settings (docs/ATLAS.md, "Coverage settings"): one setting per line in
// the CLI's --coverage form, `VARIANT[:NAME=VALUE,...]`. While automatic, it shows the settings
// the engine fitted to the last input's length and the next analysis fits them again; once the
// user types, their lines are what the next analysis measures, until "Automatic" is pressed.

#include <attnscope/coverage_settings.h>

#include <QWidget>

#include <optional>
#include <vector>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace attnscope::views {

class CoverageEditor : public QWidget {
    Q_OBJECT
public:
    explicit CoverageEditor(QWidget* parent = nullptr);

    bool automatic() const { return m_automatic; }
    /// While automatic: shows the settings an analysis used (fitted to its n tokens).
    void showUsed(const std::vector<engine::CoverageSetting>& settings, std::int64_t n);
    /// The settings for the next analysis: empty while automatic (the engine fits them); nullopt,
    /// with the faulty line marked and its error shown under the field, when a line does not parse.
    std::optional<std::vector<engine::CoverageSetting>> settingsForNextRun();
    /// Back to the engine's settings fitted to the input (the "Automatic" button).
    void resetToAutomatic();

    QPlainTextEdit* editor() const { return m_edit; }
    QString problem() const;
    QString note() const;

private:
    void onEdited();
    void showProblem(const QString& text);

    QPlainTextEdit* m_edit = nullptr;
    QLabel* m_note = nullptr;     // automatic or edited, and what that means
    QLabel* m_problem = nullptr;  // the first line that does not parse
    QPushButton* m_automaticButton = nullptr;
    bool m_automatic = true;
    bool m_filling = false;  // text set by showUsed, not typed
};

}  // namespace attnscope::views
