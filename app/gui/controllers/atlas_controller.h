#pragma once
// The Atlas tab's work: the head atlas of the open model on the input text (on the engine
// thread, cancellable, with progress), what it shows when it ends or fails, and its intent when a
// head is clicked: that layer's real Q/K/V in the Compare tab, exact softmax (the head itself)
// beside the coverage settings that replace it best.

#include <attnscope/head_atlas.h>

#include <QObject>
#include <QString>

#include <memory>

namespace attnscope::views {
class HeadAtlasView;
class InspectionState;
}  // namespace attnscope::views

namespace attnscope::app {

class ModelController;
class RunSettingsPanel;

class AtlasController : public QObject {
    Q_OBJECT
public:
    AtlasController(views::HeadAtlasView* view, ModelController* models, RunSettingsPanel* inputs,
                    views::InspectionState* state, QObject* parent);

    /// Analyses the open model on the input text with the coverage editor's settings; says what
    /// to do first when no model is open or a setting does not parse.
    void analyze();
    /// A model was opened: the tab says so and waits for Analyze.
    void modelOpened(const QString& trainingSummary);

Q_SIGNALS:
    /// A message for the status bar.
    void report(const QString& text, const QString& details = {});
    /// An analysis started or ended (Esc cancels it while it runs).
    void busyChanged();
    void atlasShown();
    void atlasFailed(const QString& message, int code);
    /// The settings column now holds layer `layer`'s Q/K/V, its own attention and the rows to
    /// compare it with: show the Compare tab and run it.
    void compareRequested(int layer, int head, int rows);

private:
    void showAtlas(const std::shared_ptr<const engine::HeadAtlas>& atlas);
    void showFailure(const QString& message, int code);
    void compareHead(int layer, int head);
    QString modelName() const;

    views::HeadAtlasView* m_view = nullptr;
    ModelController* m_models = nullptr;
    RunSettingsPanel* m_inputs = nullptr;
    views::InspectionState* m_state = nullptr;
};

}  // namespace attnscope::app
