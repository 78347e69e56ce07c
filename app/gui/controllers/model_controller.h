#pragma once
// Trained checkpoints as the Q/K/V source: File ▸ Open Model…, model folders dropped or named on
// the command line, the bundled sample model, and the "Q, K, V source" box (ModelSourcePanel).
// It opens folders on the engine thread (ModelSource), keeps what the open model says about
// the variants' settings, and tells the window when a model is open or was refused; what the
// window then shows is the window's.

#include <attnscope/model.h>
#include <attnscope/types.h>

#include <QObject>
#include <QString>

#include <map>
#include <optional>
#include <string>
#include <utility>

class QMenu;
class QWidget;

namespace attnscope::views {
class ParamForm;
}

namespace attnscope::app {

class EngineRunner;
class ModelSource;
class ModelSourcePanel;

class ModelController : public QObject {
    Q_OBJECT
public:
    /// `window` parents the panel and the dialogs (shown only with `dialogs`).
    ModelController(EngineRunner* runner, QWidget* window, bool dialogs);

    ModelSource* source() const { return m_source; }
    ModelSourcePanel* panel() const { return m_panel; }
    /// Open Model… (Ctrl+Shift+M).
    void addAction(QMenu* fileMenu);

    /// Opens a model folder on the engine thread; `layer` (>= 0) becomes the source layer once it
    /// is open. The window then shows the layer's own attention, unless `keepVariant` (a session
    /// that chose a variant). A refusal is reported and changes nothing.
    void openFolder(const QString& folder, int layer = -1, bool keepVariant = false);
    void openInteractive();
    /// File ▸ Open Captured Attention…: a .safetensors file of attention captured elsewhere.
    void openCapturedInteractive();
    void openGgufInteractive();
    /// The bundled trained model (written to the data folder first), its own attention chosen.
    void openSample();
    /// A folder, config.json or .safetensors opens its model folder ("" once started); nullopt
    /// when `path` is not a model's.
    std::optional<QString> openPath(const QString& path);

    /// True while a model layer is the Q/K/V source.
    bool usesModel() const;
    /// Makes the request's source the model layer (reading the text or picture it was given) when
    /// the source is a model layer.
    void applyTo(engine::RunRequest& request) const;
    /// The model runs on these ids (a generated sequence: prompt and written tokens) instead of
    /// tokenizing the text, until cleared (the text edited, another model opened).
    void setGeneratedIds(std::vector<std::int64_t> ids) { m_generatedIds = std::move(ids); }
    void clearGeneratedIds() { m_generatedIds.clear(); }
    const std::vector<std::int64_t>& generatedIds() const { return m_generatedIds; }
    /// The folder and layer a session records: the layer in use, or the folder still opening
    /// with the layer it will take; nullopt with random projections.
    std::optional<std::pair<QString, int>> sessionSource() const;
    /// A session's Q/K/V source, set quietly: random projections without a folder, the layer of
    /// the open model, or the folder opened (which runs `layer` once ready; true then).
    bool takeSessionSource(const QString& folder, int layer, bool keepVariant);
    /// A variant's form takes the source's settings: the open model's own for it and its
    /// causality while a model layer is the source, the schema's with random projections; what an
    /// earlier model set and this one does not goes back to the schema's value.
    void applySettingsTo(views::ParamForm* form) const;
    /// What the open model sets for `variantId` (ModelInfo::variantDefaults), or null.
    const engine::ParamValues* defaultsFor(const std::string& variantId) const;
    /// The parameters of `variantId` the model open before this one set (to be undone).
    std::vector<std::string> earlierDefaultsFor(const std::string& variantId) const;

Q_SIGNALS:
    /// A folder started opening (for the status bar).
    void opening(const QString& message);
    /// A model is open and its panel shows it. `keepVariant`: the chosen variant stays (a
    /// session's); otherwise the window shows the layer's own attention.
    void opened(const attnscope::engine::ModelInfo& info, bool keepVariant);
    /// A folder was refused: `text` for the status bar, `details` the engine's message.
    void openFailed(const QString& text, const QString& details);

private:
    void onOpened(const engine::ModelInfo& info);
    void onOpenFailed(const QString& folder, const QString& message, int code);

    QWidget* m_window = nullptr;
    bool m_dialogs = true;
    ModelSource* m_source = nullptr;
    ModelSourcePanel* m_panel = nullptr;
    QString m_pendingFolder;  // the folder opening last
    int m_pendingLayer = -1;  // the layer it takes when open (-1: the panel's)
    bool m_keepVariant = false;  // the folder opening last keeps the chosen variant
    std::map<std::string, engine::ParamValues> m_variantDefaults;  // of the open model
    std::map<std::string, engine::ParamValues> m_earlierDefaults;  // of the model open before it
    std::vector<std::int64_t> m_generatedIds;  // the sequence a generation wrote, run instead of the text
};

}  // namespace attnscope::app
