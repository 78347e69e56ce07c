#include "gui/panels/image_input_panel.h"

#include "gui/settings/session.h"

#include "common/image_file.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace attnscope::app {
namespace {

constexpr int kThumbnailSide = 120;
constexpr int kDefaultGrid = 32;
constexpr int kDefaultPatch = 16;

}  // namespace

ImageInputPanel::ImageInputPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    m_thumbnail = new QLabel(this);
    m_thumbnail->setFixedSize(kThumbnailSide, kThumbnailSide);
    m_thumbnail->setAlignment(Qt::AlignCenter);
    m_thumbnail->setFrameShape(QFrame::StyledPanel);
    m_caption = new QLabel(this);
    m_caption->setTextFormat(Qt::PlainText);
    m_caption->setWordWrap(true);
    auto* useText = new QPushButton(tr("Use the te&xt"), this);
    useText->setToolTip(tr("The text box is the input again (its text was kept)"));
    connect(useText, &QPushButton::clicked, this, &ImageInputPanel::textRequested);
    auto* side = new QVBoxLayout;
    side->addWidget(m_caption, 1);
    side->addWidget(useText, 0, Qt::AlignLeft);
    top->addWidget(m_thumbnail);
    top->addLayout(side, 1);
    layout->addLayout(top);

    auto* form = new QFormLayout;
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("pixels (resized to a grid)"), static_cast<int>(engine::ImageTokenMode::Pixels));
    m_mode->addItem(tr("patches (P × P, as ViT)"), static_cast<int>(engine::ImageTokenMode::Patches));
    m_mode->setToolTip(tr("Pixels: the picture is resized (area average) to rows × columns and every cell is a token. "
                          "Patches: the picture is cut into P × P squares, each a token, as a Vision Transformer does."));
    form->addRow(tr("T&okens"), m_mode);

    m_pixelFields = new QWidget(this);
    auto* pixelRow = new QHBoxLayout(m_pixelFields);
    pixelRow->setContentsMargins(0, 0, 0, 0);
    m_rows = new QSpinBox(m_pixelFields);
    m_cols = new QSpinBox(m_pixelFields);
    for (QSpinBox* spin : {m_rows, m_cols}) {
        spin->setRange(1, 1024);
        spin->setValue(kDefaultGrid);
    }
    m_rows->setToolTip(tr("Rows of the grid the picture is resized to"));
    m_cols->setToolTip(tr("Columns of the grid (the Sparse Transformer's stride on pixels takes this width)"));
    pixelRow->addWidget(m_rows);
    pixelRow->addWidget(new QLabel(QStringLiteral("×"), m_pixelFields));
    pixelRow->addWidget(m_cols);
    form->addRow(tr("&Grid"), m_pixelFields);

    m_patchFields = new QWidget(this);
    auto* patchRow = new QHBoxLayout(m_patchFields);
    patchRow->setContentsMargins(0, 0, 0, 0);
    m_patch = new QSpinBox(m_patchFields);
    m_patch->setRange(1, 4096);
    m_patch->setValue(kDefaultPatch);
    m_patch->setSuffix(tr(" px"));
    m_fit = new QComboBox(m_patchFields);
    m_fit->addItem(tr("crop"), static_cast<int>(engine::PatchFit::Crop));
    m_fit->addItem(tr("pad"), static_cast<int>(engine::PatchFit::Pad));
    m_fit->setToolTip(tr("When P does not divide the picture: crop the right and bottom remainder, or pad it with black"));
    m_cls = new QCheckBox(tr("CLS"), m_patchFields);
    m_cls->setToolTip(tr("A CLS token before the patches: it attends every patch and every patch attends it"));
    patchRow->addWidget(m_patch);
    patchRow->addWidget(m_fit);
    patchRow->addWidget(m_cls);
    form->addRow(tr("&Patch"), m_patchFields);
    layout->addLayout(form);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_note->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_note);

    const auto changedSetting = [this] {
        showMode();
        updateNote();
        Q_EMIT changed();
    };
    connect(m_mode, &QComboBox::currentIndexChanged, this, changedSetting);
    for (QSpinBox* spin : {m_rows, m_cols, m_patch}) connect(spin, &QSpinBox::valueChanged, this, changedSetting);
    connect(m_fit, &QComboBox::currentIndexChanged, this, changedSetting);
    connect(m_cls, &QCheckBox::toggled, this, changedSetting);
    showMode();
}

void ImageInputPanel::setImage(const QImage& picture, const QString& name, const QString& path) {
    m_picture = picture;
    m_name = name;
    m_path = path;
    m_thumbnail->setPixmap(QPixmap::fromImage(picture.scaled(kThumbnailSide, kThumbnailSide, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
    m_caption->setText(tr("%1\n%2 × %3 pixels").arg(name).arg(picture.width()).arg(picture.height()));
    updateNote();
    Q_EMIT changed();
}

void ImageInputPanel::showMode() {
    const bool pixels = m_mode->currentData().toInt() == static_cast<int>(engine::ImageTokenMode::Pixels);
    m_mode->setEnabled(!m_modelGrid);
    m_pixelFields->setEnabled(pixels && !m_modelGrid);
    m_patchFields->setEnabled(!pixels && !m_modelGrid);
}

void ImageInputPanel::setModelGrid(const std::optional<engine::GridShape>& grid) {
    m_modelGrid = grid;
    showMode();
    updateNote();
    Q_EMIT changed();
}

void ImageInputPanel::captureInto(SessionState& session) const {
    session.imagePath = m_path;
    const bool pixels = m_mode->currentData().toInt() == static_cast<int>(engine::ImageTokenMode::Pixels);
    session.imageTokens = pixels ? QStringLiteral("pixels") : QStringLiteral("patches");
    session.imageRows = m_rows->value();
    session.imageCols = m_cols->value();
    session.imagePatch = m_patch->value();
    session.imageFit = m_fit->currentData().toInt() == static_cast<int>(engine::PatchFit::Pad) ? QStringLiteral("pad") : QStringLiteral("crop");
    session.imageCls = m_cls->isChecked();
}

void ImageInputPanel::applySettings(const SessionState& session) {
    const QSignalBlocker block(this);  // one `changed` below, not one per field
    const auto mode = session.imageTokens == QLatin1String("patches") ? engine::ImageTokenMode::Patches : engine::ImageTokenMode::Pixels;
    m_mode->setCurrentIndex(m_mode->findData(static_cast<int>(mode)));
    m_rows->setValue(session.imageRows);
    m_cols->setValue(session.imageCols);
    m_patch->setValue(session.imagePatch);
    const auto fit = session.imageFit == QLatin1String("pad") ? engine::PatchFit::Pad : engine::PatchFit::Crop;
    m_fit->setCurrentIndex(m_fit->findData(static_cast<int>(fit)));
    m_cls->setChecked(session.imageCls);
    showMode();
    updateNote();
}

engine::ImageSpec ImageInputPanel::spec() const {
    engine::ImageSpec spec;
    spec.image = toRgbImage(m_picture);
    spec.name = m_name.toStdString();
    spec.mode = static_cast<engine::ImageTokenMode>(m_mode->currentData().toInt());
    spec.gridRows = m_rows->value();
    spec.gridCols = m_cols->value();
    spec.patch = m_patch->value();
    spec.fit = static_cast<engine::PatchFit>(m_fit->currentData().toInt());
    spec.cls = m_cls->isChecked();
    return spec;
}

std::optional<engine::GridShape> ImageInputPanel::gridShape() const {
    if (m_picture.isNull()) return std::nullopt;
    if (m_modelGrid) return m_modelGrid;
    engine::ImageSpec sizes;  // (the grid needs the picture's size only)
    sizes.image.width = m_picture.width();
    sizes.image.height = m_picture.height();
    sizes.mode = static_cast<engine::ImageTokenMode>(m_mode->currentData().toInt());
    sizes.gridRows = m_rows->value();
    sizes.gridCols = m_cols->value();
    sizes.patch = m_patch->value();
    sizes.fit = static_cast<engine::PatchFit>(m_fit->currentData().toInt());
    sizes.cls = m_cls->isChecked();
    return engine::plannedGrid(sizes);
}

QString ImageInputPanel::signature() const {
    return QStringLiteral("%1|%2x%3|%4|%5|%6|%7|%8")
        .arg(m_name)
        .arg(m_picture.width())
        .arg(m_picture.height())
        .arg(m_mode->currentIndex())
        .arg(m_rows->value() * 4096 + m_cols->value())
        .arg(m_patch->value())
        .arg(m_fit->currentIndex())
        .arg(m_cls->isChecked());
}

void ImageInputPanel::updateNote() {
    if (m_picture.isNull()) return m_note->clear();
    const int w = m_picture.width(), h = m_picture.height();
    if (m_modelGrid) {
        const engine::GridShape& g = *m_modelGrid;
        m_note->setText(tr("The model prepares the picture itself (resize and crop as its preprocessor_config.json says): "
                           "%1 tokens, %2 × %3 patches%4.")
                            .arg(g.rows * g.cols + g.prefix)
                            .arg(g.rows)
                            .arg(g.cols)
                            .arg(g.prefix == 2   ? tr(" after [CLS] and [DIST]")
                                 : g.prefix == 1 ? tr(" after [CLS]")
                                                 : QString()));
        return;
    }
    if (m_mode->currentData().toInt() == static_cast<int>(engine::ImageTokenMode::Pixels)) {
        m_note->setText(tr("%1 tokens (%2 × %3 cells of %4 × %5 pixels each).")
                            .arg(m_rows->value() * m_cols->value())
                            .arg(m_rows->value())
                            .arg(m_cols->value())
                            .arg(double(w) / m_cols->value(), 0, 'g', 3)
                            .arg(double(h) / m_rows->value(), 0, 'g', 3));
        return;
    }
    const int p = m_patch->value();
    const bool pad = m_fit->currentData().toInt() == static_cast<int>(engine::PatchFit::Pad);
    const int cols = pad ? (w + p - 1) / p : w / p, rows = pad ? (h + p - 1) / p : h / p;
    if (cols < 1 || rows < 1) {
        m_note->setText(tr("A patch of %1 pixels is larger than the picture (%2 × %3): choose a smaller patch or pad.").arg(p).arg(w).arg(h));
        return;
    }
    QString text = tr("%1 tokens (%2 × %3 patches%4).").arg(rows * cols + (m_cls->isChecked() ? 1 : 0)).arg(rows).arg(cols)
                       .arg(m_cls->isChecked() ? tr(" after the CLS token") : QString());
    if (w % p || h % p)
        text += QLatin1Char(' ') + (pad ? tr("%1 does not divide %2 × %3: the picture is padded with black to whole patches.")
                                        : tr("%1 does not divide %2 × %3: the right %4 and bottom %5 pixels are cropped."))
                                       .arg(p).arg(w).arg(h).arg(w % p).arg(h % p);
    m_note->setText(text);
}

QString ImageInputPanel::note() const { return m_note->text(); }

}  // namespace attnscope::app
