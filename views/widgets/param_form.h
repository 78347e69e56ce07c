#pragma once
// A form built from a variant's parameter schema (no per-variant code, DESIGN.md).

#include <attnscope/variant_info.h>

#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

class QFormLayout;
class QLabel;
class QPushButton;

namespace attnscope::views {

class ParamForm : public QWidget {
    Q_OBJECT
public:
    explicit ParamForm(QWidget* parent = nullptr);

    /// Rebuilds the form: QCheckBox for Bool, QSpinBox for Int, QDoubleSpinBox for Float,
    /// QComboBox for Choice, QLineEdit ("1,2,3") for lists; each editor's objectName is the
    /// parameter name and it starts at the schema default.
    void setVariant(const engine::VariantInfo& info);
    const engine::VariantInfo& variant() const { return m_info; }

    /// The typed values of every parameter. List entries that do not parse are skipped and
    /// reported by invalidParams(); the engine validates ranges again.
    engine::ParamValues values() const;
    /// Sets the editors of the named parameters; unknown names and mismatched types are ignored.
    void setValues(const engine::ParamValues& values);
    /// Sets parameters from "name=value" texts through the schema; returns one error per text
    /// that names no parameter or whose value does not parse (the others are still set).
    QStringList applyTexts(const QStringList& texts);
    /// Names of list parameters whose text has entries that are not numbers.
    QStringList invalidParams() const;

    /// The input is an image of this grid (nullopt: not an image). Parameters that take a value
    /// from the image (ParamSpec::imageDefault: the Sparse Transformer's stride, local2d's width)
    /// show it, with a note saying so, until the user changes them; back to the schema default
    /// when the input is text again. Kept across setVariant.
    void setImageGrid(const std::optional<engine::GridShape>& grid);

    /// Shows `text` under the parameter's field; a problem also marks the field. With `fixLabel`,
    /// a button beside the text calls `fix` (e.g. "Set pad = true"). Unknown names are ignored.
    /// The notes stay until clearFieldNotes() or another variant.
    void setFieldNote(const QString& param, const QString& text, bool problem = true, const QString& fixLabel = {},
                      std::function<void()> fix = {});
    void clearFieldNotes();
    /// The note under the parameter's field ("" when none) and its fix button (null when none).
    QString fieldNote(const QString& param) const;
    QPushButton* fieldFix(const QString& param) const;

Q_SIGNALS:
    void valuesChanged();
    /// A value the user typed was brought into its range (the note says so under the field too).
    void notice(const QString& text);

private:
    QWidget* createEditor(const engine::ParamSpec& spec);

    QFormLayout* m_layout = nullptr;
    engine::VariantInfo m_info;
    std::vector<QWidget*> m_editors;  // parallel to m_info.params
    struct FieldNote {
        QWidget* row = nullptr;
        QLabel* text = nullptr;
        QPushButton* fix = nullptr;
        std::function<void()> action;
    };
    std::vector<FieldNote> m_notes;  // parallel to m_info.params
    int indexOf(const QString& param) const;
    QWidget* fieldWithNote(QWidget* editor, FieldNote& note);
    /// A parameter whose default follows another (ParamSpec::defaultFrom) takes that one's value
    /// as it changes, until the user sets it.
    void linkDefaults();
    /// Parameters read only under another's value (ParamSpec::usedWhen) are disabled otherwise.
    void linkUsage();
    /// Puts the image's values into the fields that still follow it (setImageGrid).
    void showImageDefaults();
    bool m_following = false;  // (a followed value is being copied: not the user's edit)
    std::optional<engine::GridShape> m_imageGrid;
};

}  // namespace attnscope::views
