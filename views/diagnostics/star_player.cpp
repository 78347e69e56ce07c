#include "views/diagnostics/star_player.h"

#include "views/data/colormap.h"
#include "views/widgets/figure_painter.h"

#include <attnscope/diagnostics.h>
#include "views/data/inspection_state.h"
#include "views/data/token_label.h"

#include <QCheckBox>
#include <QDir>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

constexpr int kMaxCycles = 12;
constexpr long long kMaxLabelledNodes = 48;
constexpr long long kMaxDrawnNodes = 400;

const QColor kRingColour(0x00, 0x72, 0xb2);   // blue: ring edges
const QColor kRelayColour(0xe6, 0x9f, 0x00);  // orange: the hub's edges
const QColor kEmbeddingColour(0x00, 0x9e, 0x73);  // green: the embedding edge
const QColor kTakesColour(0xcc, 0x79, 0xa7);      // purple: a satellite's weight on the relay

QString legendText() {
    return QObject::tr(
        "Each cycle every satellite (a token) attends to five keys: its left and right neighbours, itself, its own "
        "embedding and the relay; then the relay attends to itself and every satellite. Blue: what neighbours take "
        "from each other (the mean of the two directions); orange: the relay's weight on each satellite; purple: the "
        "satellite's weight on the relay; green ring: "
        "the satellite's weight on its own embedding; fill: how much the node changed this cycle (‖hᵗ − hᵗ⁻¹‖). "
        "Through the ring information moves one neighbour per cycle; through the relay, any distance in two cycles "
        "(Guo et al. 2019). fastNLP's encoder in eval mode, with random weights from the run's seed or a trained "
        "model's (Open Star Model…).");
}

float at4(const engine::PlainTensor& t, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return t.f32[static_cast<std::size_t>(((a * t.shape[1] + b) * t.shape[2] + c) * t.shape[3] + d)];
}

float at3(const engine::PlainTensor& t, std::int64_t a, std::int64_t b, std::int64_t c) {
    return t.f32[static_cast<std::size_t>((a * t.shape[1] + b) * t.shape[2] + c)];
}

}  // namespace

StarPlayer::StarPlayer(QWidget* parent) : ResultPage(parent) {
    setFocusPolicy(Qt::StrongFocus);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 2);
    m_playButton = new QPushButton(tr("Play"), this);
    m_playButton->setObjectName(QStringLiteral("starPlay"));
    m_playButton->setToolTip(tr("Play the cycles (Space)"));
    connect(m_playButton, &QPushButton::clicked, this, [this] { playing() ? pause() : play(); });
    bar->addWidget(m_playButton);
    auto* cycleLabel = new QLabel(tr("C&ycle"), this);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setObjectName(QStringLiteral("starCycle"));
    m_slider->setRange(1, 1);
    m_slider->setMinimumWidth(120);
    m_slider->setToolTip(tr("The cycle shown (← → or [ ] step)"));
    cycleLabel->setBuddy(m_slider);
    connect(m_slider, &QSlider::valueChanged, this, [this](int value) { showCycle(value); });
    bar->addWidget(cycleLabel);
    bar->addWidget(m_slider);
    auto* cyclesLabel = new QLabel(tr("C&ycles T"), this);
    m_cyclesBox = new QSpinBox(this);
    m_cyclesBox->setRange(1, kMaxCycles);
    m_cyclesBox->setValue(kDefaultCycles);
    m_cyclesBox->setToolTip(tr("Update cycles (the encoder's layers); runs the cycles again"));
    cyclesLabel->setBuddy(m_cyclesBox);
    bar->addWidget(cyclesLabel);
    bar->addWidget(m_cyclesBox);
    m_cyclic = new QCheckBox(tr("&Closed ring"), this);
    m_cyclic->setToolTip(tr("Close the ring (first and last tokens are neighbours); fastNLP's ring is open"));
    bar->addWidget(m_cyclic);
    connect(m_cyclesBox, &QSpinBox::valueChanged, this, &StarPlayer::rerun);
    connect(m_cyclic, &QCheckBox::toggled, this, &StarPlayer::rerun);
    auto* openModel = new QPushButton(tr("Open Star &Model…"), this);
    openModel->setToolTip(tr("Use a trained Star-Transformer's weights (a folder such as samples/star-first)"));
    connect(openModel, &QPushButton::clicked, this, &StarPlayer::openModelRequested);
    bar->addWidget(openModel);
    m_randomButton = new QPushButton(tr("Random Weights"), this);
    m_randomButton->setToolTip(tr("Back to random weights from the run's seed"));
    m_randomButton->setVisible(false);
    connect(m_randomButton, &QPushButton::clicked, this, [this] { setModelFolder({}); });
    bar->addWidget(m_randomButton);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    bar->addWidget(m_info, 1);
    layout->addLayout(bar);
    m_canvas = new StarCanvas(this);
    layout->addWidget(m_canvas, 1);
    auto* legend = new QLabel(legendText(), this);
    legend->setObjectName(QStringLiteral("starLegend"));
    legend->setTextFormat(Qt::PlainText);
    legend->setWordWrap(true);
    legend->setMargin(8);
    layout->addWidget(legend);
    m_timer = new QTimer(this);
    m_timer->setInterval(kPlayIntervalMs);
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (!m_pass || m_cycle >= m_pass->cycles) return pause();
        showCycle(m_cycle + 1);
    });
    rebuild();
}

StarPlayer::~StarPlayer() = default;

void StarPlayer::rerun() {
    m_pass.reset();
    m_asked = false;
    m_error.clear();
    rebuild();
    if (isVisible()) requestOnce();
}

void StarPlayer::setModelFolder(const QString& folder) {
    if (folder == m_modelFolder) return;
    m_modelFolder = folder;
    m_randomButton->setVisible(!folder.isEmpty());
    // a folder's config.json sets the cycles and the ring
    m_cyclesBox->setEnabled(folder.isEmpty());
    m_cyclic->setEnabled(folder.isEmpty());
    rerun();
}

engine::StarRequest StarPlayer::request() const {
    engine::StarRequest r;
    if (!m_result) return r;
    r.text = m_result->input.text;
    r.tokenizer = m_result->input.kind == engine::TokenizerKind::Model ? engine::TokenizerKind::Bytes : m_result->input.kind;
    r.seed = m_result->projection.seed;
    r.heads = m_result->projection.heads;
    r.headDim = m_result->projection.headDim;
    r.cycles = m_cyclesBox->value();
    r.cyclic = m_cyclic->isChecked();
    r.modelFolder = m_modelFolder.toStdString();
    return r;
}

void StarPlayer::setResult(Run result) {
    const bool same = m_result && result && m_result->input.text == result->input.text && m_result->projection.seed == result->projection.seed &&
                      m_result->projection.heads == result->projection.heads && m_result->projection.headDim == result->projection.headDim &&
                      m_result->input.kind == result->input.kind;
    m_result = std::move(result);
    // the ring follows the star variant's own `cyclic` (the checkbox can still change it)
    if (const engine::AttentionResult* star =
            m_result ? engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Star) : nullptr) {
        const auto cyclic = star->params.find("cyclic");
        if (cyclic != star->params.end() && std::holds_alternative<bool>(cyclic->second) && std::get<bool>(cyclic->second) != m_cyclic->isChecked()) {
            const QSignalBlocker block(m_cyclic);
            m_cyclic->setChecked(std::get<bool>(cyclic->second));
            m_pass.reset();
            m_asked = false;
        }
    }
    if (!same) {
        m_pass.reset();
        m_asked = false;
        m_error.clear();
    }
    rebuild();
    if (isVisible()) requestOnce();
}

void StarPlayer::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    requestOnce();
}

void StarPlayer::requestOnce() {
    if (m_asked || m_pass || !m_result || m_result->input.text.empty()) return;
    m_asked = true;
    Q_EMIT starRequested(request());
}

void StarPlayer::setPass(const engine::StarRequest& forRequest, std::shared_ptr<const engine::StarPass> pass) {
    const engine::StarRequest now = request();
    if (!pass || forRequest.text != now.text || forRequest.cycles != now.cycles || forRequest.cyclic != now.cyclic ||
        forRequest.seed != now.seed || forRequest.heads != now.heads || forRequest.headDim != now.headDim ||
        forRequest.modelFolder != now.modelFolder)
        return;  // an answer to an older question
    m_pass = std::move(pass);
    m_error.clear();
    m_cycle = 1;
    rebuild();
    Q_EMIT passChanged(m_pass);
    Q_EMIT cycleChanged(m_cycle);
}

void StarPlayer::setFailed(const QString& message) {
    m_error = message;
    rebuild();
}

void StarPlayer::showCycle(int cycle) {
    const int last = m_pass ? static_cast<int>(m_pass->cycles) : 1;
    const int clamped = std::clamp(cycle, 1, last);
    if (clamped == m_cycle && m_slider->value() == clamped) return;
    m_cycle = clamped;
    rebuild();
    Q_EMIT cycleChanged(m_cycle);
}

void StarPlayer::play() {
    if (!m_pass) return;
    if (m_cycle >= m_pass->cycles) showCycle(1);
    m_timer->start();
    m_playButton->setText(tr("Pause"));
}

void StarPlayer::pause() {
    m_timer->stop();
    m_playButton->setText(tr("Play"));
}

bool StarPlayer::playing() const { return m_timer->isActive(); }

int StarPlayer::head() const {
    if (!m_pass) return 0;
    return std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(m_pass->heads) - 1);
}

void StarPlayer::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Space: playing() ? pause() : play(); return;
    case Qt::Key_Right:
    case Qt::Key_BracketRight: showCycle(m_cycle + 1); return;
    case Qt::Key_Left:
    case Qt::Key_BracketLeft: showCycle(m_cycle - 1); return;
    default: QWidget::keyPressEvent(event);
    }
}

QString StarPlayer::message() const { return m_info->text(); }

QString StarPlayer::nodeSummary(long long i) const {
    if (!m_pass || i < 0 || i >= m_pass->n) return {};
    const std::int64_t t = m_cycle - 1, h = head();
    QStringList weights;
    for (int key = 0; key < engine::StarPass::kRingKeys; ++key)
        weights << QStringLiteral("%1 %2").arg(QLatin1String(engine::starRingKeyName(key))).arg(at4(m_pass->ringWeights, t, h, i, key), 0, 'f', 3);
    const QString token = i < static_cast<long long>(m_pass->input.tokens.size())
                              ? tokenLabel(m_pass->input.tokens[static_cast<std::size_t>(i)].text, 24)
                              : QString::number(i);
    return tr("satellite %1 “%2”, cycle %3, head %4: %5; the relay's weight on it %6; change %7")
        .arg(i)
        .arg(token)
        .arg(m_cycle)
        .arg(h)
        .arg(weights.join(QStringLiteral(", ")))
        .arg(at3(m_pass->relayWeights, t, h, i + 1), 0, 'f', 3)
        .arg(m_pass->nodeChange.f32[static_cast<std::size_t>(t * m_pass->n + i)], 0, 'f', 3);
}

void StarPlayer::rebuild() {
    const QSignalBlocker block(m_slider);
    if (!m_pass) {
        m_slider->setEnabled(false);
        m_playButton->setEnabled(false);
        m_info->setText(!m_error.isEmpty()      ? tr("The cycles could not be run: %1").arg(m_error)
                        : m_result             ? tr("Running the Star-Transformer's cycles…")
                                               : tr("No result yet: choose star and run."));
        m_canvas->update();
        return;
    }
    m_slider->setEnabled(true);
    m_playButton->setEnabled(true);
    m_slider->setRange(1, static_cast<int>(m_pass->cycles));
    m_slider->setValue(m_cycle);
    const std::int64_t t = m_cycle - 1, h = head(), n = m_pass->n;
    // where the relay looks most, and which node moved most
    std::int64_t relayTop = 0, moved = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (at3(m_pass->relayWeights, t, h, i + 1) > at3(m_pass->relayWeights, t, h, relayTop + 1)) relayTop = i;
        if (m_pass->nodeChange.f32[static_cast<std::size_t>(t * n + i)] > m_pass->nodeChange.f32[static_cast<std::size_t>(t * n + moved)]) moved = i;
    }
    const auto label = [&](std::int64_t i) {
        const QString text = i < static_cast<std::int64_t>(m_pass->input.tokens.size())
                                 ? tokenLabel(m_pass->input.tokens[static_cast<std::size_t>(i)].text, 16)
                                 : QString();
        return tr("%1 (satellite %2)").arg(text).arg(i);
    };
    const QString weights = m_modelFolder.isEmpty() ? tr("random weights") : tr("weights of %1").arg(QDir(m_modelFolder).dirName());
    m_info->setText(tr("Cycle %1 of %2, head %3 of %4, %5 satellites (%6 ring, %11). The relay reads most from %7, weight %8, and "
                       "keeps %9 on itself; %10 changed most.")
                        .arg(m_cycle)
                        .arg(m_pass->cycles)
                        .arg(h)
                        .arg(m_pass->heads)
                        .arg(n)
                        .arg(m_pass->cyclic ? tr("closed") : tr("open"))
                        .arg(label(relayTop))
                        .arg(at3(m_pass->relayWeights, t, h, relayTop + 1), 0, 'f', 3)
                        .arg(at3(m_pass->relayWeights, t, h, 0), 0, 'f', 3)
                        .arg(label(moved))
                        .arg(weights));
    m_canvas->update();
}

// ---- the drawing

StarCanvas::StarCanvas(StarPlayer* player) : QWidget(player), m_player(player) {
    setMouseTracking(true);
    setMinimumSize(320, 240);
    setObjectName(QStringLiteral("starCanvas"));
    setProperty(FigurePainter::kRenderProperty, true);  // exported as it paints (figures, frames)
}

double StarCanvas::nodeRadius() const {
    const engine::StarPass* p = m_player->pass();
    const long long n = p ? std::min<long long>(p->n, kMaxDrawnNodes) : 1;
    const double room = p && p->cyclic ? 2 * M_PI * 0.38 * std::min(width(), height()) / static_cast<double>(n) : width() * 0.9 / static_cast<double>(n);
    return std::clamp(room * 0.35, 2.0, 16.0);
}

QPointF StarCanvas::hubPosition() const {
    const engine::StarPass* p = m_player->pass();
    if (p && !p->cyclic) return {width() / 2.0, height() * 0.22};
    return {width() / 2.0, height() / 2.0};
}

QPointF StarCanvas::nodePosition(long long i) const {
    const engine::StarPass* p = m_player->pass();
    const long long n = p ? std::min<long long>(p->n, kMaxDrawnNodes) : 1;
    if (p && p->cyclic) {
        const double angle = -M_PI / 2 + 2 * M_PI * static_cast<double>(i) / static_cast<double>(n);
        const double r = 0.38 * std::min(width(), height());
        return hubPosition() + QPointF(r * std::cos(angle), r * std::sin(angle));
    }
    const double left = width() * 0.05, step = n > 1 ? width() * 0.9 / static_cast<double>(n - 1) : 0;
    return {n > 1 ? left + step * static_cast<double>(i) : width() / 2.0, height() * 0.75};
}

long long StarCanvas::nodeAt(const QPointF& point) const {
    const engine::StarPass* p = m_player->pass();
    if (!p) return -1;
    const double r = nodeRadius() + 3;
    for (long long i = 0; i < std::min<long long>(p->n, kMaxDrawnNodes); ++i)
        if (QLineF(point, nodePosition(i)).length() <= r) return i;
    return -1;
}

void StarCanvas::mouseMoveEvent(QMouseEvent* event) {
    const long long i = nodeAt(event->position());
    if (i >= 0) QToolTip::showText(event->globalPosition().toPoint(), m_player->nodeSummary(i), this);
    else QToolTip::hideText();
}

void StarCanvas::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    const engine::StarPass* p = m_player->pass();
    if (!p) return;
    const std::int64_t t = m_player->cycle() - 1, h = m_player->head();
    const long long n = std::min<long long>(p->n, kMaxDrawnNodes);
    const double radius = nodeRadius();
    const QPointF hub = hubPosition();
    const double widest = std::max(3.0, radius);
    // the hub's edges: the relay's weight on each satellite (scaled to the largest)
    double relayMax = 1e-9;
    for (long long i = 0; i < n; ++i) relayMax = std::max(relayMax, static_cast<double>(at3(p->relayWeights, t, h, i + 1)));
    // both directions side by side: orange the relay's weight on the satellite (what it gathers),
    // purple the satellite's weight on the relay (what it takes back)
    for (long long i = 0; i < n; ++i) {
        const QPointF at = nodePosition(i);
        const QLineF spoke(hub, at);
        const QPointF side = spoke.length() > 0 ? QPointF(-spoke.dy(), spoke.dx()) / spoke.length() * (1.0 + widest * 0.35) : QPointF();
        const double gathers = at3(p->relayWeights, t, h, i + 1) / relayMax;
        QColor c = kRelayColour;
        c.setAlphaF(static_cast<float>(0.15 + 0.85 * gathers));
        painter.setPen(QPen(c, 0.5 + widest * gathers));
        painter.drawLine(hub + side, at + side);
        const double takes = at4(p->ringWeights, t, h, i, 4);
        QColor back = kTakesColour;
        back.setAlphaF(static_cast<float>(0.15 + 0.85 * std::min(1.0, 2 * takes)));
        painter.setPen(QPen(back, 0.5 + widest * takes));
        painter.drawLine(hub - side, at - side);
    }
    // ring edges: the mean of what i takes from i + 1 and i + 1 from i
    for (long long i = 0; i < n; ++i) {
        const long long j = i + 1 < n ? i + 1 : (p->cyclic ? 0 : -1);
        if (j < 0 || (j == i)) continue;
        const double w = 0.5 * (at4(p->ringWeights, t, h, i, 2) + at4(p->ringWeights, t, h, j, 0));
        QColor c = kRingColour;
        c.setAlphaF(static_cast<float>(0.2 + 0.8 * std::min(1.0, 2 * w)));
        painter.setPen(QPen(c, 0.5 + 2 * widest * w));
        painter.setBrush(Qt::NoBrush);
        // an arc bowing away from the hub, so that neighbours' edges show beside the nodes
        const QPointF a = nodePosition(i), b = nodePosition(j), middle = (a + b) / 2;
        QPointF away = middle - hub;
        const double length = std::max(1.0, std::hypot(away.x(), away.y()));
        away *= (radius * 2.5 + QLineF(a, b).length() * 0.3) / length;
        QPainterPath arc(a);
        arc.quadTo(middle + away, b);
        painter.drawPath(arc);
    }
    // nodes: fill by change this cycle, a green ring by the weight on its own embedding
    double changeMax = 1e-9;
    for (long long i = 0; i < n; ++i) changeMax = std::max(changeMax, static_cast<double>(p->nodeChange.f32[static_cast<std::size_t>(t * p->n + i)]));
    const Colormap& viridis = Colormap::viridis();
    const QColor fg = palette().color(QPalette::Text);
    for (long long i = 0; i < n; ++i) {
        const QPointF at = nodePosition(i);
        const double change = p->nodeChange.f32[static_cast<std::size_t>(t * p->n + i)] / changeMax;
        painter.setPen(QPen(kEmbeddingColour, 0.5 + 1.5 * widest * at4(p->ringWeights, t, h, i, 3)));
        painter.setBrush(QColor(viridis.map(change)));
        painter.drawEllipse(at, radius, radius);
        if (n <= kMaxLabelledNodes && i < static_cast<long long>(p->input.tokens.size())) {
            painter.setPen(fg);
            const QString text = tokenLabel(p->input.tokens[static_cast<std::size_t>(i)].text, 10);
            const QPointF offset = p->cyclic ? (at - hub) * (1.0 + (radius + 12) / std::max(1.0, QLineF(hub, at).length())) + hub - at
                                             : QPointF(0, radius + 12);
            const QRectF box(at + offset - QPointF(40, 8), QSizeF(80, 16));
            painter.drawText(box, Qt::AlignCenter, text);
        }
    }
    // the hub: its weight on itself as the fill
    painter.setPen(QPen(fg, 1.5));
    painter.setBrush(kRelayColour.lighter(100 + static_cast<int>(100 * (1 - at3(p->relayWeights, t, h, 0)))));
    painter.drawEllipse(hub, radius * 1.8, radius * 1.8);
    painter.setPen(fg);
    painter.drawText(QRectF(hub - QPointF(40, radius * 1.8 + 18), QSizeF(80, 16)), Qt::AlignCenter, tr("relay"));
    if (p->n > n) painter.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignTop | Qt::AlignLeft, tr("the first %1 of %2 satellites").arg(n).arg(p->n));
}

}  // namespace attnscope::views
