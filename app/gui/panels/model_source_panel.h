#pragma once
// The "Q, K, V source" box: seeded random projections, or one layer of the opened model (its name,
// architecture and layers × heads shown). Only widgets: opening and running are the window's.

#include <attnscope/model.h>

#include <QGroupBox>
#include <QString>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace attnscope::app {

class ModelSourcePanel : public QGroupBox {
    Q_OBJECT
public:
    enum class Kind { RandomProjections = 0, ModelLayer = 1 };

    explicit ModelSourcePanel(QWidget* parent = nullptr);

    /// Shows the opened model, sets the layer range and enables "model layer". The chosen layer
    /// is kept when the model has it.
    void setModel(const engine::ModelInfo& info);
    bool hasModel() const { return m_layers > 0; }
    Kind kind() const;
    void setKind(Kind kind);
    /// True when runs take the model's Q/K/V.
    bool usesModel() const { return hasModel() && kind() == Kind::ModelLayer; }
    int layer() const;
    void setLayer(int layer);
    /// A line under the model's name: an error, or the model's notices. Plain text.
    void setNote(const QString& text);
    QString note() const;
    QString modelText() const;

    QComboBox* kindCombo() const { return m_kind; }
    QSpinBox* layerSpin() const { return m_layer; }
    QPushButton* openButton() const { return m_open; }

Q_SIGNALS:
    /// The source or the layer changed: the shown result no longer matches it.
    void sourceChanged();
    void openRequested();

private:
    QComboBox* m_kind = nullptr;
    QSpinBox* m_layer = nullptr;
    QLabel* m_model = nullptr;
    QLabel* m_note = nullptr;
    QPushButton* m_open = nullptr;
    int m_layers = 0;
};

}  // namespace attnscope::app
