#pragma once
// The window's left column: the input text and its tokenizer, the attention variant and its
// form, the compared variants, the seeded random projections (or, below them, where a model
// supplies Q, K, V) and Run / Cancel. It scrolls when the window is short; Run and Cancel stay in
// view. It holds the choices a run is made from and says nothing about how runs are made.

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QImage>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace attnscope::views {
class ParamForm;
}

namespace attnscope::app {

class CompareVariantsEditor;
class ImageInputPanel;
struct ResolvedSession;
struct SessionState;
struct AppSettings;

class RunSettingsPanel : public QWidget {
    Q_OBJECT
public:
    /// What the column starts with (the settings of the last session and the input text).
    struct Initial {
        QString text;
        QString tokenizer;  ///< "words", "chars" or "bytes"
        int heads = 4, headDim = 32, seed = 0;
    };
    explicit RunSettingsPanel(const Initial& initial, QWidget* parent = nullptr);

    QPlainTextEdit* text() const { return m_text; }
    /// The image input (shown instead of the text while an image is the input).
    ImageInputPanel* imageInput() const { return m_imageInput; }
    /// An opened picture becomes the input; the text is kept for "Use the text".
    void useImage(const QImage& picture, const QString& name, const QString& path = {});
    /// A session's image token settings (the picture itself is already the input).
    void applyImageSettings(const SessionState& session);
    /// The text box is the input again.
    void useText();
    bool imageIsInput() const { return m_imageIsInput; }
    QComboBox* tokenizerCombo() const { return m_tokenizerCombo; }
    QComboBox* variantCombo() const { return m_variantCombo; }
    /// The chosen variant's summary and paper, as plain text.
    QLabel* variantInfo() const { return m_variantInfo; }
    views::ParamForm* paramForm() const { return m_paramForm; }
    /// Every compared variant (row 0 is the "Compare with" choice).
    CompareVariantsEditor* compareEditor() const { return m_compareEditor; }
    QSpinBox* headsSpin() const { return m_headsSpin; }
    QSpinBox* headDimSpin() const { return m_headDimSpin; }
    QSpinBox* seedSpin() const { return m_seedSpin; }
    QPushButton* runButton() const { return m_runButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }

    /// The engine's variants: the chooser lists them and shows the preferred one (the last
    /// session's, kept while no list is there); the compared rows list them too.
    void setVariants(const std::vector<engine::VariantInfo>& variants);
    const std::vector<engine::VariantInfo>& variants() const { return m_variants; }
    void setPreferredVariant(const QString& id) { m_preferredVariant = id; }
    /// The chooser's entry for a model layer's own attention (its data; never a variant id).
    static const QString& ownAttentionId();
    /// With a model layer as the source: the chooser offers its own attention first (`summaries`:
    /// per layer, what it is in words, shown under the chooser); nullopt removes the entry (random
    /// projections), choosing the preferred variant if the entry was chosen.
    void setOwnAttention(const std::optional<std::vector<QString>>& summaries);
    /// Chooses the model layer's own attention (when offered).
    void chooseOwnAttention();
    /// True when the model layer's own attention is chosen (the run asks for it, not a variant).
    bool ownAttentionChosen() const;
    /// True while the chooser offers it (a model layer is the source, and the model has one:
    /// captured attention files have none).
    bool ownAttentionOffered() const { return m_ownSummaries.has_value(); }
    /// The layer whose own attention the chooser describes.
    void setOwnAttentionLayer(int layer);
    /// The chosen variant's id (the preferred one before the list is known).
    QString variantId() const;
    /// The run's main variant with the form's values.
    engine::VariantRequest variantRequest() const;
    /// Marks every list parameter that does not parse under its field; returns their names (with
    /// the compared rows' when `compared`).
    QStringList markInvalidParams(bool compared);

    /// The column's part of a session: text, tokenizer, projections, variant and compared rows.
    void captureInto(SessionState& session) const;
    /// The settings the next start begins with: tokenizer, variant, heads, head size, seed.
    void captureInto(AppSettings& settings) const;
    /// Shows a session checked by resolveSession; refuses (and changes nothing) when its
    /// tokenizer is unknown. Returns the refusal, "" when applied.
    QString applySession(const SessionState& session, const ResolvedSession& resolved);

    /// Puts `widget` below the projections (the model source panel).
    void addSourceWidget(QWidget* widget);
    /// Scrolls the settings so that `widget` (one of them) is in view.
    void scrollTo(QWidget* widget);
    /// A button in the row of Run and Cancel (Generate), between them.
    void addBesideRun(QWidget* button);
    /// With a model the model's own tokenizer (named `tokenizerName`) and projections replace
    /// the column's, which keep their values for random projections.
    /// `imageGrid`: a vision model's own patch grid (it prepares pictures itself).
    void showModelSource(bool model, const QString& tokenizerName = {}, const std::optional<engine::GridShape>& imageGrid = {});

    /// The seeded random projections the column shows.
    engine::ProjectionSpec projection() const;
    /// The input (text and tokenizer, or the image) and projections of a request as the column shows them.
    void fillRequest(engine::RunRequest& request) const;

Q_SIGNALS:
    /// The input changed between text and image, or the image or its settings changed.
    void inputChanged();
    /// A message for the status bar (a typed value clamped into range, a form's note).
    void notice(const QString& text);
    /// The chosen variant's summary and form are shown (the chooser changed or a list came).
    void variantShown();

private:
    QWidget* buildInputBox(const Initial& initial);
    QWidget* buildVariantBox();
    QWidget* buildCompareBox();
    QWidget* buildProjectionBox(const Initial& initial);
    void showChosenVariant();
    /// The forms show the values the image input gives (or the schema's, for text).
    void showImageGrid();

    QWidget* m_content = nullptr;
    QVBoxLayout* m_contentLayout = nullptr;
    QHBoxLayout* m_buttons = nullptr;  // Run, (Generate,) Cancel
    QPlainTextEdit* m_text = nullptr;
    QWidget* m_textFields = nullptr;  // the text box and its tokenizer row
    ImageInputPanel* m_imageInput = nullptr;
    bool m_imageIsInput = false;
    QComboBox* m_tokenizerCombo = nullptr;
    QLabel* m_modelTokenizer = nullptr;
    QComboBox* m_variantCombo = nullptr;
    QLabel* m_variantInfo = nullptr;
    views::ParamForm* m_paramForm = nullptr;
    CompareVariantsEditor* m_compareEditor = nullptr;
    QWidget* m_projectionBox = nullptr;
    QSpinBox* m_headsSpin = nullptr;  // (ClampingSpinBox, as the two below)
    QSpinBox* m_headDimSpin = nullptr;
    QSpinBox* m_seedSpin = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    std::vector<engine::VariantInfo> m_variants;
    QString m_preferredVariant;
    std::optional<std::vector<QString>> m_ownSummaries;  ///< per layer, while the entry is offered
    int m_ownLayer = 0;
};

}  // namespace attnscope::app
