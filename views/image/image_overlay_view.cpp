#include "views/image/image_overlay_view.h"

#include "views/data/colormap.h"
#include "views/diagnostics/categorical_palette.h"
#include "views/widgets/figure_painter.h"
#include "views/image/image_canvas.h"
#include "views/data/inspection_state.h"
#include "views/data/reason_palette.h"

#include <attnscope/variant_catalog.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStackedLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace attnscope::views {
namespace {

constexpr int kMaxGroupLegendEntries = 12;

QString percent(double share) { return QString::number(100.0 * share, 'f', 1) + QStringLiteral(" %"); }

}  // namespace

ImageOverlayView::ImageOverlayView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    buildToolbar();
    auto* bar = new QWidget(this);
    bar->setProperty(FigurePainter::kSkipProperty, true);
    auto* barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(0, 0, 0, 0);
    const auto labelled = [&](const QString& text, QWidget* field) {
        auto* label = new QLabel(text, bar);
        label->setBuddy(field);
        barLayout->addWidget(label);
        barLayout->addWidget(field);
    };
    labelled(tr("&Show"), m_kindCombo);
    barLayout->addWidget(m_roundLabel);
    barLayout->addWidget(m_roundSpin);
    barLayout->addWidget(m_rolloutFields);
    barLayout->addWidget(m_shareFields);
    labelled(tr("Colo&urs"), m_colormapCombo);
    labelled(tr("O&pacity"), m_opacitySlider);
    barLayout->addWidget(m_smoothBox);
    barLayout->addWidget(m_allHeadsBox);
    barLayout->addWidget(m_clsButton);
    barLayout->addStretch(1);
    // The bar scrolls sideways rather than widen the window on a small screen.
    auto* barScroll = new QScrollArea(this);
    barScroll->setProperty(FigurePainter::kSkipProperty, true);
    barScroll->setFrameShape(QFrame::NoFrame);
    barScroll->setWidgetResizable(true);
    barScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    barScroll->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    barScroll->setWidget(bar);
    barScroll->setFixedHeight(bar->sizeHint().height() + barScroll->horizontalScrollBar()->sizeHint().height());
    layout->addWidget(barScroll);

    auto* stackHost = new QWidget(this);
    auto* stack = new QStackedLayout(stackHost);
    m_canvas = new ImageCanvas(stackHost);
    m_messageLabel = new QLabel(stackHost);
    m_messageLabel->setWordWrap(true);
    m_messageLabel->setAlignment(Qt::AlignCenter);
    m_messageLabel->setTextFormat(Qt::PlainText);
    m_messageLabel->setMargin(24);
    stack->addWidget(m_canvas);
    stack->addWidget(m_messageLabel);
    layout->addWidget(stackHost, 1);
    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setProperty(FigurePainter::kSkipProperty, true);
    layout->addWidget(m_status);

    connect(m_canvas, &ImageCanvas::tokenClicked, this, [this](int token) {
        setQuery(token);
        Q_EMIT queryChosen(token);
    });
    connect(m_canvas, &ImageCanvas::tokenHovered, this, &ImageOverlayView::showHover);
    rebuild();
}

void ImageOverlayView::buildToolbar() {
    m_kindCombo = new QComboBox(this);
    m_kindCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kindCombo->setMinimumContentsLength(22);
    m_kindCombo->addItem(tr("Weights from the query"), static_cast<int>(OverlayKind::Weights));
    m_kindCombo->addItem(tr("Keys the query may attend"), static_cast<int>(OverlayKind::Mask));
    m_kindCombo->addItem(tr("Buckets / clusters"), static_cast<int>(OverlayKind::Groups));
    m_kindCombo->addItem(tr("Every layer (model)"), static_cast<int>(OverlayKind::Layers));
    m_kindCombo->addItem(tr("Rollout (model)"), static_cast<int>(OverlayKind::Rollout));
    m_kindCombo->addItem(tr("Flow (model)"), static_cast<int>(OverlayKind::Flow));
    m_kindCombo->addItem(tr("DINO: share of the attention (model)"), static_cast<int>(OverlayKind::MassShare));
    m_kindCombo->setToolTip(tr("What is drawn over the picture: the selected head's weights from the query, the mask "
                               "coloured by reason, or each token's LSH bucket (Reformer) or k-means cluster (Routing). "
                               "With a vision model (ViT, DeiT, DINO): the head's weights in every layer, attention "
                               "rollout through all layers, or the patches holding a share of the last layer's attention"));
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this,
            [this] { setKind(static_cast<OverlayKind>(m_kindCombo->currentData().toInt())); });
    m_roundLabel = new QLabel(tr("Round"), this);
    m_roundSpin = new QSpinBox(this);
    m_roundSpin->setToolTip(tr("Which hash round's buckets (Reformer), or the clusters of the queries or of the keys (Routing)"));
    connect(m_roundSpin, &QSpinBox::valueChanged, this, [this](int value) {
        m_settings.round = value;
        rebuild();
    });
    buildModelFields();
    m_colormapCombo = new QComboBox(this);
    for (const QString& name : Colormap::builtinNames())
        if (!Colormap::isDiverging(name)) m_colormapCombo->addItem(name, name);
    connect(m_colormapCombo, &QComboBox::currentIndexChanged, this, [this] { setColormap(m_colormapCombo->currentData().toString()); });
    m_opacitySlider = new QSlider(Qt::Horizontal, this);
    m_opacitySlider->setRange(0, 100);
    m_opacitySlider->setValue(static_cast<int>(m_settings.opacity * 100));
    m_opacitySlider->setMaximumWidth(120);
    m_opacitySlider->setMinimumWidth(70);
    m_opacitySlider->setToolTip(tr("Opacity of the overlay: the strongest weight is drawn this opaque"));
    connect(m_opacitySlider, &QSlider::valueChanged, this, [this](int value) { setOpacity(value / 100.0); });
    m_smoothBox = new QCheckBox(tr("S&mooth"), this);
    m_smoothBox->setToolTip(tr("Smooth upsampling of the weights over the picture (off: one flat block per pixel or patch)"));
    connect(m_smoothBox, &QCheckBox::toggled, this, &ImageOverlayView::setSmooth);
    m_allHeadsBox = new QCheckBox(tr("All &heads"), this);
    m_allHeadsBox->setToolTip(tr("One picture per head, the same query"));
    connect(m_allHeadsBox, &QCheckBox::toggled, this, &ImageOverlayView::setAllHeads);
    m_clsButton = new QPushButton(tr("Query: CLS"), this);
    m_clsButton->setToolTip(tr("Make the CLS token the query: where it looks in the picture"));
    connect(m_clsButton, &QPushButton::clicked, this, [this] {
        setQuery(0);
        Q_EMIT queryChosen(0);
    });
}

void ImageOverlayView::buildModelFields() {
    const auto row = [this](QWidget* host) {
        auto* layout = new QHBoxLayout(host);
        layout->setContentsMargins(0, 0, 0, 0);
        return layout;
    };
    m_rolloutFields = new QWidget(this);
    auto* rollout = row(m_rolloutFields);
    m_fusionCombo = new QComboBox(m_rolloutFields);
    for (engine::HeadFusion f : {engine::HeadFusion::Mean, engine::HeadFusion::Max, engine::HeadFusion::Min})
        m_fusionCombo->addItem(QString::fromLatin1(engine::headFusionName(f)), static_cast<int>(f));
    m_fusionCombo->setToolTip(tr("How each layer's heads become one matrix before rollout: their mean, or the largest or "
                                 "smallest weight of any head"));
    connect(m_fusionCombo, &QComboBox::currentIndexChanged, this,
            [this] { setHeadFusion(static_cast<engine::HeadFusion>(m_fusionCombo->currentData().toInt())); });
    m_discardSpin = new QDoubleSpinBox(m_rolloutFields);
    m_discardSpin->setRange(0.0, 0.99);
    m_discardSpin->setSingleStep(0.05);
    m_discardSpin->setValue(m_settings.discardRatio);
    m_discardSpin->setToolTip(tr("The share of each layer's smallest fused weights set to 0 before rolling out "
                                 "(the CLS token's own weight is kept)"));
    connect(m_discardSpin, &QDoubleSpinBox::valueChanged, this, &ImageOverlayView::setDiscardRatio);
    auto* fusionLabel = new QLabel(tr("&Heads"), m_rolloutFields);
    fusionLabel->setBuddy(m_fusionCombo);
    auto* discardLabel = new QLabel(tr("&Discard"), m_rolloutFields);
    discardLabel->setBuddy(m_discardSpin);
    for (QWidget* w : {static_cast<QWidget*>(fusionLabel), static_cast<QWidget*>(m_fusionCombo), static_cast<QWidget*>(discardLabel),
                       static_cast<QWidget*>(m_discardSpin)})
        rollout->addWidget(w);
    m_shareFields = new QWidget(this);
    auto* share = row(m_shareFields);
    m_shareSpin = new QDoubleSpinBox(m_shareFields);
    m_shareSpin->setRange(0.05, 1.0);
    m_shareSpin->setSingleStep(0.05);
    m_shareSpin->setValue(m_settings.massShare);
    m_shareSpin->setToolTip(tr("The patches shown clear hold this share of the query's attention in the last layer "
                               "(DINO shows 0.6)"));
    connect(m_shareSpin, &QDoubleSpinBox::valueChanged, this, &ImageOverlayView::setMassShare);
    auto* shareLabel = new QLabel(tr("Sh&are"), m_shareFields);
    shareLabel->setBuddy(m_shareSpin);
    share->addWidget(shareLabel);
    share->addWidget(m_shareSpin);
}

void ImageOverlayView::setHeadFusion(engine::HeadFusion fusion) {
    m_settings.fusion = fusion;
    const QSignalBlocker block(m_fusionCombo);
    m_fusionCombo->setCurrentIndex(m_fusionCombo->findData(static_cast<int>(fusion)));
    rebuild();
}

void ImageOverlayView::setDiscardRatio(double ratio) {
    m_settings.discardRatio = std::clamp(ratio, 0.0, 0.99);
    const QSignalBlocker block(m_discardSpin);
    m_discardSpin->setValue(m_settings.discardRatio);
    rebuild();
}

void ImageOverlayView::setMassShare(double share) {
    m_settings.massShare = std::clamp(share, 0.05, 1.0);
    const QSignalBlocker block(m_shareSpin);
    m_shareSpin->setValue(m_settings.massShare);
    rebuild();
}

void ImageOverlayView::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void ImageOverlayView::setResult(Run result) {
    const bool sameGrid = m_result && result && m_result->input.image && result->input.image &&
                          m_result->input.image->rows == result->input.image->rows &&
                          m_result->input.image->cols == result->input.image->cols &&
                          m_result->input.image->prefix == result->input.image->prefix;
    m_result = std::move(result);
    ++m_resultSerial;
    if (!sameGrid || m_query < 0 || !m_result || m_query >= static_cast<int>(m_result->input.tokens.size())) m_query = defaultQuery();
    rebuild();
}

void ImageOverlayView::setPicture(const QImage& picture) {
    m_picture = picture;
    rebuild();
}

void ImageOverlayView::setQuery(int token) {
    m_query = token;
    rebuild();
}

void ImageOverlayView::setKind(OverlayKind kind) {
    m_settings.kind = kind;
    const QSignalBlocker block(m_kindCombo);
    m_kindCombo->setCurrentIndex(m_kindCombo->findData(static_cast<int>(kind)));
    rebuild();
}

void ImageOverlayView::setAllHeads(bool on) {
    m_allHeads = on;
    const QSignalBlocker block(m_allHeadsBox);
    m_allHeadsBox->setChecked(on);
    rebuild();
}

void ImageOverlayView::setSmooth(bool on) {
    m_smooth = on;
    const QSignalBlocker block(m_smoothBox);
    m_smoothBox->setChecked(on);
    rebuild();
}

void ImageOverlayView::setOpacity(double opacity) {
    m_settings.opacity = std::clamp(opacity, 0.0, 1.0);
    const QSignalBlocker block(m_opacitySlider);
    m_opacitySlider->setValue(static_cast<int>(std::lround(m_settings.opacity * 100)));
    rebuild();
}

void ImageOverlayView::setColormap(const QString& name) {
    m_settings.colormap = name;
    const QSignalBlocker block(m_colormapCombo);
    m_colormapCombo->setCurrentIndex(std::max(0, m_colormapCombo->findData(name)));
    rebuild();
}

int ImageOverlayView::shownResultIndex() const {
    if (!m_result || m_result->results.empty()) return -1;
    const int index = m_state ? m_state->resultIndex() : 0;
    return std::clamp(index, 0, static_cast<int>(m_result->results.size()) - 1);
}

int ImageOverlayView::defaultQuery() const {
    if (!m_result || !m_result->input.image) return -1;
    const engine::ImageGrid& g = *m_result->input.image;
    if (g.prefix > 0) return 0;
    return static_cast<int>(g.prefix + (g.rows / 2) * g.cols + g.cols / 2);
}

bool ImageOverlayView::pictureMatches() const {
    const engine::ImageGrid& g = *m_result->input.image;
    return !m_picture.isNull() && m_picture.width() == g.sourceWidth && m_picture.height() == g.sourceHeight;
}

QString ImageOverlayView::message() const { return m_message; }

void ImageOverlayView::rebuild() {
    m_facts.clear();
    m_message.clear();
    auto* stack = static_cast<QStackedLayout*>(m_canvas->parentWidget()->layout());
    const auto showMessage = [&](const QString& text) {
        m_message = text;
        m_messageLabel->setText(text);
        stack->setCurrentWidget(m_messageLabel);
        m_status->clear();
    };
    if (!m_result) return showMessage(tr("No result yet. Open an image (File ▸ Open Image…, or drop one here) and run."));
    if (!m_result->input.image)
        return showMessage(tr("The Image tab draws attention over a picture: open an image (File ▸ Open Image…, or drop one "
                              "on the window) and run. This run's input is text."));
    if (!pictureMatches())
        return showMessage(tr("The picture of this run (%1, %2 × %3) is not the one open now: run again to draw on it.")
                               .arg(QString::fromStdString(m_result->input.image->name))
                               .arg(m_result->input.image->sourceWidth)
                               .arg(m_result->input.image->sourceHeight));
    const int index = shownResultIndex();
    const engine::AttentionResult& r = m_result->results[static_cast<std::size_t>(index)];
    const engine::ImageGrid& grid = *m_result->input.image;
    const engine::VariantInfo* info = engine::findVariantInfo(r.variantId);
    const bool hasGroups = info && info->tokenGroups && r.diagnostics.count(info->tokenGroups->diagnostic);
    // (the item is enabled only when the variant groups its tokens: role UserRole − 1 holds its flags)
    m_kindCombo->setItemData(2, hasGroups ? int(Qt::ItemIsSelectable | Qt::ItemIsEnabled) : 0, Qt::UserRole - 1);
    if (m_settings.kind == OverlayKind::Groups && !hasGroups) m_settings.kind = OverlayKind::Weights;
    const bool hasLayers = !m_result->modelLayerAttention.empty();
    for (OverlayKind kind : {OverlayKind::Layers, OverlayKind::Rollout, OverlayKind::Flow, OverlayKind::MassShare})
        m_kindCombo->setItemData(m_kindCombo->findData(static_cast<int>(kind)),
                                 hasLayers ? int(Qt::ItemIsSelectable | Qt::ItemIsEnabled) : 0, Qt::UserRole - 1);
    if (isModelKind(m_settings.kind) && !hasLayers) m_settings.kind = OverlayKind::Weights;
    m_rolloutFields->setVisible(m_settings.kind == OverlayKind::Rollout);
    m_shareFields->setVisible(m_settings.kind == OverlayKind::MassShare);
    {
        const QSignalBlocker block(m_kindCombo);
        m_kindCombo->setCurrentIndex(m_kindCombo->findData(static_cast<int>(m_settings.kind)));
    }
    const bool groups = m_settings.kind == OverlayKind::Groups;
    const std::int64_t rounds = hasGroups ? r.diagnostics.at(info->tokenGroups->diagnostic).shape[1] : 1;
    m_roundSpin->setRange(0, static_cast<int>(std::max<std::int64_t>(0, rounds - 1)));
    m_roundLabel->setVisible(groups && rounds > 1);
    m_roundSpin->setVisible(groups && rounds > 1);
    if (groups && hasGroups)
        m_roundLabel->setText(info->tokenGroups->roundNames.empty()
                                  ? QString::fromStdString(info->tokenGroups->roundNoun)
                                  : QString::fromStdString(info->tokenGroups->roundNames[std::size_t(std::clamp<std::int64_t>(m_settings.round, 0, rounds - 1))]));
    const bool graded = m_settings.kind == OverlayKind::Weights || m_settings.kind == OverlayKind::Layers ||
                        m_settings.kind == OverlayKind::Rollout || m_settings.kind == OverlayKind::Flow;
    m_colormapCombo->setEnabled(graded);
    m_smoothBox->setEnabled(graded);
    m_allHeadsBox->setEnabled(m_settings.kind == OverlayKind::Weights || m_settings.kind == OverlayKind::Mask ||
                              m_settings.kind == OverlayKind::Groups || m_settings.kind == OverlayKind::MassShare);
    m_clsButton->setVisible(grid.prefix > 0);
    if (m_query < 0 || m_query >= r.n) m_query = defaultQuery();

    const int selected = m_state ? std::clamp(m_state->head(), 0, static_cast<int>(r.heads) - 1) : 0;
    if (isModelKind(m_settings.kind)) {
        if (const QString why = showModelKind(selected); !why.isEmpty()) return showMessage(why);
        stack->setCurrentWidget(m_canvas);
        return updateStatus();
    }
    QVector<ImageCanvas::Tile> tiles;
    for (int h = m_allHeads ? 0 : selected; h < (m_allHeads ? static_cast<int>(r.heads) : selected + 1); ++h) {
        OverlayFacts facts;
        ImageCanvas::Tile tile;
        tile.overlay = overlayImage(*m_result, index, h, m_query, m_settings, &facts);
        if (!facts.message.isEmpty()) return showMessage(facts.message);
        if (m_allHeads) tile.label = tr("head %1").arg(h);
        tiles.push_back(tile);
        m_facts.push_back(facts);
    }
    m_canvas->setPicture(m_picture);
    m_canvas->setGrid(m_result->input.image, m_query);
    m_canvas->setTiles(tiles, m_smooth && m_settings.kind == OverlayKind::Weights);

    ImageCanvas::Legend legend;
    if (m_settings.kind == OverlayKind::Weights) {
        legend.title = tr("weight from the query");
        const Colormap& map = Colormap::builtin(m_settings.colormap);
        double top = 0;
        for (const OverlayFacts& f : m_facts) top = std::max(top, f.maxWeight);
        legend.top = m_allHeads ? m_facts.front().maxWeight : top;
        if (m_allHeads) legend.title = tr("weight (each head to its own largest)");
        for (int i = 0; i < Colormap::kSize; ++i) legend.ramp.push_back(map.color(i));
    } else if (m_settings.kind == OverlayKind::Mask) {
        legend.title = tr("why a key is allowed");
        for (engine::PatternReason reason : info ? info->reasons : std::vector<engine::PatternReason>{})
            legend.entries.push_back({ReasonPalette::standard().color(reason), QString::fromLatin1(engine::patternReasonName(reason))});
        legend.entries.push_back({QColor(0, 0, 0, 150), tr("not allowed")});
    } else {
        legend.title = tr("%1 of each token").arg(QString::fromStdString(info->tokenGroups->noun));
        std::set<long long> seen;
        const engine::PlainTensor& g = r.diagnostics.at(info->tokenGroups->diagnostic);
        const std::int64_t n = g.shape[2], round = std::clamp<std::int64_t>(m_settings.round, 0, rounds - 1);
        for (std::int64_t t = grid.prefix; t < std::min(n, grid.prefix + grid.cells()); ++t)
            seen.insert(g.i64[std::size_t((selected * rounds + round) * n + t)]);
        for (long long id : seen) {
            if (legend.entries.size() >= kMaxGroupLegendEntries) {
                legend.entries.push_back({QColor(Qt::transparent), tr("… %1 in all").arg(seen.size())});
                break;
            }
            legend.entries.push_back({CategoricalPalette::standard().color(id), QStringLiteral("%1 %2").arg(QString::fromStdString(info->tokenGroups->noun)).arg(id)});
        }
    }
    m_canvas->setLegend(legend);
    stack->setCurrentWidget(m_canvas);
    updateStatus();
}

void ImageOverlayView::updateStatus() {
    if (!m_result || m_facts.isEmpty()) return;
    const engine::ImageGrid& grid = *m_result->input.image;
    QString query;  // a grid cell by its row and column (its token text "(10, 8)" did not say which is which)
    if (m_query >= 0 && m_query < static_cast<int>(m_result->input.tokens.size())) {
        const engine::Token& token = m_result->input.tokens[std::size_t(m_query)];
        query = token.row >= 0 ? tr("row %1, column %2").arg(token.row).arg(token.col) : QString::fromStdString(token.text);
    }
    QStringList parts;
    const int head = m_state ? m_state->head() : 0;
    parts << (m_allHeads ? tr("all heads") : tr("head %1").arg(head)) << tr("query %1").arg(query);
    const OverlayFacts& f = m_facts.front();
    if (m_settings.kind == OverlayKind::Weights) {
        parts << tr("largest weight on the picture %1").arg(f.maxWeight, 0, 'g', 3);
        if (grid.prefix > 0) parts << tr("CLS takes %1").arg(percent(f.prefixWeight));
    } else if (m_settings.kind == OverlayKind::Mask) {
        parts << tr("%1 of %2 cells allowed").arg(f.allowedCells).arg(grid.cells());
    } else if (m_settings.kind == OverlayKind::Layers) {
        parts << tr("%1 layers, each to its own largest weight").arg(m_facts.size());
    } else if (m_settings.kind == OverlayKind::Rollout) {
        parts << tr("rollout through %1 layers, heads %2, discard %3; largest %4")
                     .arg(m_result->modelLayerAttention.size())
                     .arg(QString::fromLatin1(engine::headFusionName(m_settings.fusion)))
                     .arg(m_settings.discardRatio, 0, 'g', 2)
                     .arg(f.maxWeight, 0, 'g', 3);
    } else if (m_settings.kind == OverlayKind::Flow) {
        parts << tr("attention flow through %1 layers (heads' mean); largest %2")
                     .arg(m_result->modelLayerAttention.size())
                     .arg(f.maxWeight, 0, 'g', 3);
    } else if (m_settings.kind == OverlayKind::MassShare) {
        parts << tr("%1 of %2 patches hold %3 of the last layer's attention").arg(f.allowedCells).arg(grid.cells()).arg(percent(m_settings.massShare));
    } else {
        parts << tr("the query is in group %1 with %2 cells").arg(f.queryGroup).arg(f.sameGroupCells);
    }
    if (m_hovered >= 0 && m_hovered < static_cast<int>(m_result->input.tokens.size()) && !isModelKind(m_settings.kind)) {
        const engine::AttentionResult& r = m_result->results[std::size_t(shownResultIndex())];
        if (m_query >= 0 && m_query < r.n && m_hovered < r.m)
            parts << tr("%1: weight %2 (exact)")
                         .arg(QString::fromStdString(m_result->input.tokens[std::size_t(m_hovered)].text))
                         .arg(r.weightAt(std::clamp(head, 0, static_cast<int>(r.heads) - 1), m_query, m_hovered), 0, 'g', 4);
    }
    for (const std::string& note : grid.notes) parts << QString::fromStdString(note);
    m_status->setText(parts.join(QStringLiteral(" · ")));
}

void ImageOverlayView::showHover(int token) {
    m_hovered = token;
    updateStatus();
}

QString ImageOverlayView::status() const { return m_status->text(); }

}  // namespace attnscope::views
