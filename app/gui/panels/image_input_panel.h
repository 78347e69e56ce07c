#pragma once
// The left column's image input (docs/IMAGES.md): the opened picture as a thumbnail with its name
// and size, and how it becomes tokens: pixels (the picture resized to a grid) or P × P patches
// (cropped or padded, with or without a CLS token). Shown instead of the text box while an image
// is the input; the text stays as it was typed and returns with "Use the text".

#include <attnscope/types.h>

#include <QImage>
#include <QString>
#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace attnscope::app {

struct SessionState;

class ImageInputPanel : public QWidget {
    Q_OBJECT
public:
    explicit ImageInputPanel(QWidget* parent = nullptr);

    /// A decoded picture (common/image_file.h) becomes the input, named `name`, read from `path`
    /// (absolute; empty for a picture with no file).
    void setImage(const QImage& picture, const QString& name, const QString& path = {});
    QString path() const { return m_path; }
    /// The file and token settings as a session stores them (docs/SESSIONS.md), and back.
    void captureInto(SessionState& session) const;
    void applySettings(const SessionState& session);
    bool hasImage() const { return !m_picture.isNull(); }
    const QImage& picture() const { return m_picture; }
    QString name() const { return m_name; }

    /// The request's image input as the panel shows it (picture, mode, grid, patch, fit, CLS).
    engine::ImageSpec spec() const;
    /// The token grid the settings give this picture (nullopt: no picture, or no whole patch).
    std::optional<engine::GridShape> gridShape() const;
    /// A short text of the settings, for "out of date" checks.
    QString signature() const;

    QComboBox* modeCombo() const { return m_mode; }
    QSpinBox* rowsSpin() const { return m_rows; }
    QSpinBox* colsSpin() const { return m_cols; }
    QSpinBox* patchSpin() const { return m_patch; }
    QComboBox* fitCombo() const { return m_fit; }
    QCheckBox* clsBox() const { return m_cls; }
    /// The note under the fields: tokens, and what crop or pad does to this picture.
    QString note() const;
    /// A vision model is the source: it prepares the picture itself (its preprocessor) into
    /// `grid`, so the token settings are set aside and the note says so; nullopt gives them back.
    void setModelGrid(const std::optional<engine::GridShape>& grid);

Q_SIGNALS:
    /// A setting or the picture changed.
    void changed();
    /// "Use the text": the text box is the input again.
    void textRequested();

private:
    void showMode();
    void updateNote();

    QImage m_picture;
    QString m_name, m_path;
    std::optional<engine::GridShape> m_modelGrid;
    QLabel* m_thumbnail = nullptr;
    QLabel* m_caption = nullptr;
    QComboBox* m_mode = nullptr;
    QSpinBox* m_rows = nullptr;
    QSpinBox* m_cols = nullptr;
    QSpinBox* m_patch = nullptr;
    QComboBox* m_fit = nullptr;
    QCheckBox* m_cls = nullptr;
    QLabel* m_note = nullptr;
    QWidget* m_pixelFields = nullptr;
    QWidget* m_patchFields = nullptr;
};

}  // namespace attnscope::app
