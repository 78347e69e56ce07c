#pragma once
// The "Compare with" box: 1–3 variants compared with the main variant (so 2–4 panes in the
// Compare tab), each with its schema-driven parameter form. Row 0 always exists; rows 1 and 2 are
// added and removed by the user.

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QToolButton;
class QVBoxLayout;

namespace attnscope::views {
class ParamForm;
}

namespace attnscope::app {

class CompareVariantsEditor : public QWidget {
    Q_OBJECT
public:
    /// Variants besides the main one: the compare view has at most 4 panes.
    static constexpr int kMaxRows = 3;

    explicit CompareVariantsEditor(QWidget* parent = nullptr);
    ~CompareVariantsEditor() override;

    /// Fills every row's list; rows keep their variant when it still exists, else take
    /// `preferred` (row 0) or the next variant in the list.
    void setVariants(const std::vector<engine::VariantInfo>& variants, const QString& preferred);

    int rowCount() const { return static_cast<int>(m_rows.size()); }
    /// Adds a row showing `id` (or the first variant not yet compared); false at kMaxRows.
    bool addRow(const QString& id = {});
    /// Removes row `index` (1 or 2; row 0 stays).
    bool removeRow(int index);
    QComboBox* combo(int row) const;
    views::ParamForm* form(int row) const;
    QPushButton* addButton() const { return m_add; }
    /// Variant ids of the rows, in order (empty ids left out).
    QStringList ids() const;
    /// One request per row, with the form's values.
    std::vector<engine::VariantRequest> requests() const;
    /// Makes the rows show `rows` (at least row 0 stays): each its variant (an unknown id leaves
    /// the row's choice), its schema defaults, then the given values.
    void setRows(const std::vector<engine::VariantRequest>& rows);
    /// "ID:NAME=VALUE" texts (--compare-param) into the row of ID (the first such row), a plain
    /// "NAME=VALUE" into row 0; the problems, as ParamForm::applyTexts gives them.
    QStringList applyParamTexts(const QStringList& texts);
    /// Parameters that do not parse, as "row 2: window".
    QStringList invalidParams() const;
    /// Every row's form shows the values an image input gives (ParamForm::setImageGrid).
    void setImageGrid(const std::optional<engine::GridShape>& grid);

Q_SIGNALS:
    /// A row was added or removed, or a row's variant changed.
    void changed();
    /// Row `form`'s variant is shown with its schema's values (a new row, another variant).
    void rowVariantShown(attnscope::views::ParamForm* form);

private:
    struct Row {
        QWidget* box = nullptr;
        QComboBox* combo = nullptr;
        QLabel* info = nullptr;
        views::ParamForm* form = nullptr;
        QToolButton* remove = nullptr;
    };

    void fillCombo(QComboBox* combo, const QString& id);
    void showVariant(const Row& row);
    void updateButtons();

    std::vector<engine::VariantInfo> m_variants;
    std::vector<Row> m_rows;
    QVBoxLayout* m_rowsLayout = nullptr;
    QPushButton* m_add = nullptr;
    std::optional<engine::GridShape> m_imageGrid;
};

}  // namespace attnscope::app
