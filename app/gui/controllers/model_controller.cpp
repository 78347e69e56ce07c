#include "gui/controllers/model_controller.h"

#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/settings/sample_model.h"

#include "views/widgets/param_form.h"

#include <attnscope/safetensors.h>

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStandardPaths>

#include <algorithm>

namespace attnscope::app {

namespace {

// Captured attention carries its tokens in the metadata; a model's weight file does not.
bool isCapturedAttentionFile(const QString& path) {
    auto file = engine::SafetensorsFile::open(path.toStdString());
    return file.ok() && file.value()->header().metadata.count("tokens") > 0;
}

}  // namespace

ModelController::ModelController(EngineRunner* runner, QWidget* window, bool dialogs)
    : QObject(window), m_window(window), m_dialogs(dialogs) {
    m_source = new ModelSource(runner, this);
    m_panel = new ModelSourcePanel(window);
    connect(m_panel, &ModelSourcePanel::openRequested, this, &ModelController::openInteractive);
    connect(m_source, &ModelSource::modelOpened, this, &ModelController::onOpened);
    connect(m_source, &ModelSource::modelOpenFailed, this, &ModelController::onOpenFailed);
}

void ModelController::addAction(QMenu* fileMenu) {
    QAction* open = fileMenu->addAction(tr("Open &Model…"), this, &ModelController::openInteractive);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    open->setToolTip(tr("Open a model folder (config.json, model.safetensors, tokenizer files); a .gguf file opens with "
                        "File ▸ Open GGUF Model… or by dropping it on the window"));
    QAction* gguf = fileMenu->addAction(tr("Open &GGUF Model…"), this, &ModelController::openGgufInteractive);
    gguf->setToolTip(tr("Open a model held as one GGUF file (llama.cpp, Ollama, LM Studio), quantized or not: its weights "
                        "are dequantized a layer at a time, its tokenizer read from the file"));
    QAction* captured = fileMenu->addAction(tr("Open Captured &Attention…"), this, &ModelController::openCapturedInteractive);
    captured->setToolTip(tr("Open attention captured from any model: a .safetensors file with attentions and/or q, k, v "
                            "and its tokens (docs/CAPTURED_ATTENTION.md)"));
}

void ModelController::openGgufInteractive() {
    const QString file = QFileDialog::getOpenFileName(m_window, tr("Open GGUF Model"), m_source->folder(), tr("GGUF models (*.gguf)"));
    if (!file.isEmpty()) openFolder(file);
}

void ModelController::openCapturedInteractive() {
    const QString file = QFileDialog::getOpenFileName(m_window, tr("Open Captured Attention"), m_source->folder(),
                                                      tr("Captured attention (*.safetensors)"));
    if (!file.isEmpty()) openFolder(file);
}

void ModelController::openFolder(const QString& folder, int layer, bool keepVariant) {
    Q_EMIT opening(tr("Opening the model %1…").arg(QDir(folder).dirName()));
    m_panel->openButton()->setEnabled(false);
    m_pendingFolder = folder;
    m_pendingLayer = layer;
    m_keepVariant = keepVariant;
    m_source->open(folder);
}

void ModelController::openInteractive() {
    const QString folder = QFileDialog::getExistingDirectory(m_window, tr("Open Model Folder"), m_source->folder());
    if (!folder.isEmpty()) openFolder(folder);
}

void ModelController::openSample() {
    QString error;
    const auto folder = extractSampleModel(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation), &error);
    if (!folder) {
        Q_EMIT openFailed(tr("Cannot prepare the sample model: %1").arg(error), error);
        return;
    }
    openFolder(*folder);
}

std::optional<QString> ModelController::openPath(const QString& path) {
    // A folder, or a file that only makes sense inside a model folder, opens that folder.
    const QFileInfo info(path);
    const QString name = info.fileName();
    if (info.isDir()) {
        openFolder(info.absoluteFilePath());
        return QString();
    }
    if (name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) {  // one file holds the whole model
        openFolder(info.absoluteFilePath());
        return QString();
    }
    if (name.endsWith(QLatin1String(".safetensors")) && isCapturedAttentionFile(path)) {
        openFolder(info.absoluteFilePath());
        return QString();
    }
    if (name == QLatin1String("config.json") || name.endsWith(QLatin1String(".safetensors")) ||
        name.endsWith(QLatin1String(".safetensors.index.json"))) {
        openFolder(info.absolutePath());
        return QString();
    }
    return std::nullopt;
}

bool ModelController::usesModel() const { return m_panel->usesModel(); }

void ModelController::applyTo(engine::RunRequest& request) const {
    if (!m_panel->usesModel()) return;
    // The model reads the text or picture the run settings filled in.
    engine::InputSpec input = request.input() ? *request.input() : engine::InputSpec{};
    request.source = engine::ModelLayerSource{m_source->folder().toStdString(), m_panel->layer(), false, m_generatedIds, std::move(input)};
}

void ModelController::applySettingsTo(views::ParamForm* form) const {
    const engine::VariantInfo& variant = form->variant();
    if (variant.id.empty()) return;
    const auto& model = m_source->model();
    const bool usesModel = model && m_panel->usesModel();
    // (nothing is carried from one model to the next: Transformer-XL's segment and memory)
    engine::ParamValues values;
    for (const std::string& name : earlierDefaultsFor(variant.id))
        if (const engine::ParamSpec* spec = variant.findParam(name)) values[name] = spec->defaultValue;
    // A decoder's variants are causal, an encoder's are not, and random projections take the schema's.
    if (const engine::ParamValues* defaults = usesModel ? defaultsFor(variant.id) : nullptr)
        for (const auto& [name, value] : *defaults) values[name] = value;
    if (const engine::ParamSpec* causal = variant.findParam("causal"))
        values["causal"] = usesModel ? engine::ParamValue{model->causal} : causal->defaultValue;
    if (!values.empty()) form->setValues(values);
}

bool ModelController::takeSessionSource(const QString& folder, int layer, bool keepVariant) {
    const bool open = m_source->model().has_value() && m_source->folder() == folder;
    {
        const QSignalBlocker block(m_panel);  // (the session runs once, when it is all applied)
        if (folder.isEmpty()) {
            m_panel->setKind(ModelSourcePanel::Kind::RandomProjections);
        } else if (open) {
            m_panel->setKind(ModelSourcePanel::Kind::ModelLayer);
            m_panel->setLayer(layer);
        }
    }
    if (folder.isEmpty() || open) return false;
    openFolder(folder, layer, keepVariant);
    return true;
}

std::optional<std::pair<QString, int>> ModelController::sessionSource() const {
    if (m_panel->usesModel()) return std::make_pair(m_source->folder(), m_panel->layer());
    if (m_pendingLayer >= 0 && m_source->isOpening()) return std::make_pair(m_pendingFolder, m_pendingLayer);
    return std::nullopt;
}

std::vector<std::string> ModelController::earlierDefaultsFor(const std::string& variantId) const {
    std::vector<std::string> names;
    if (const auto it = m_earlierDefaults.find(variantId); it != m_earlierDefaults.end())
        for (const auto& [name, value] : it->second) names.push_back(name);
    return names;
}

const engine::ParamValues* ModelController::defaultsFor(const std::string& variantId) const {
    const auto it = m_variantDefaults.find(variantId);
    return it == m_variantDefaults.end() ? nullptr : &it->second;
}

void ModelController::onOpened(const engine::ModelInfo& info) {
    m_panel->openButton()->setEnabled(true);
    m_generatedIds.clear();  // (another model's ids)
    m_panel->setModel(info);
    m_earlierDefaults = std::move(m_variantDefaults);
    m_variantDefaults = info.variantDefaults;
    const bool keepVariant = m_keepVariant;
    m_keepVariant = false;
    {
        // Every model starts on its first layer (or the session's): the window runs it once it has
        // shown the model.
        const QSignalBlocker quiet(m_panel);
        m_panel->setLayer(m_pendingLayer >= 0 ? std::min<int>(m_pendingLayer, static_cast<int>(info.layers) - 1) : 0);
    }
    m_pendingLayer = -1;
    Q_EMIT opened(info, keepVariant);
}

void ModelController::onOpenFailed(const QString& folder, const QString& message, int /*code*/) {
    m_panel->openButton()->setEnabled(true);
    m_pendingLayer = -1;
    m_keepVariant = false;
    // (without the error code's name: "not found" only repeated the message in the engine's words)
    const QString text = tr("Cannot open the model %1: %2").arg(QDir(folder).dirName(), message);
    // The previous model (if any) stays the source: the refusal changed nothing.
    if (m_dialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open the model"), text, QMessageBox::Ok, m_window);
        box->setTextFormat(Qt::PlainText);  // file and tensor names are untrusted (FORMATS.md §5)
        // What a model folder holds, unless the message has just said it.
        if (!message.contains(QStringLiteral("model folder holds"), Qt::CaseInsensitive))
            box->setInformativeText(
                tr("A model folder holds config.json, model.safetensors (or a sharded index) "
                   "and tokenizer files. Pickled .bin/.pt checkpoints are refused: convert them "
                   "to safetensors."));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    Q_EMIT openFailed(text, message);
}

}  // namespace attnscope::app
