#include "views/image/overlay_image.h"

#include "views/data/colormap.h"
#include "views/diagnostics/categorical_palette.h"
#include "views/data/reason_palette.h"

#include <attnscope/variant_catalog.h>

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace attnscope::views {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("OverlayImage", text); }

QRgb withAlpha(QColor color, int alpha) {
    color.setAlpha(std::clamp(alpha, 0, 255));
    return color.rgba();
}

// The not-allowed cells of the mask: the picture dimmed.
constexpr double kDimShare = 0.6;

void drawWeights(const engine::AttentionResult& r, const engine::ImageGrid& grid, int head, int query,
                 const OverlaySettings& settings, QImage& out, OverlayFacts& facts) {
    const engine::WeightTile row = r.weights->tile(head, query, query + 1, 0, r.m, /*withReasons=*/false);
    for (std::int64_t j = 0; j < std::min<std::int64_t>(grid.prefix, r.m); ++j) facts.prefixWeight += row.weights[std::size_t(j)];
    double top = 0;
    for (std::int64_t cell = 0; cell < grid.cells() && grid.prefix + cell < r.m; ++cell)
        top = std::max(top, static_cast<double>(row.weights[std::size_t(grid.prefix + cell)]));
    facts.maxWeight = top;
    const Colormap& map = Colormap::builtin(settings.colormap);
    for (std::int64_t cell = 0; cell < grid.cells() && grid.prefix + cell < r.m; ++cell) {
        const double w = row.weights[std::size_t(grid.prefix + cell)];
        const QColor colour = QColor::fromRgb(map.map(top > 0 ? w / top : 0));
        out.setPixel(int(cell % grid.cols), int(cell / grid.cols), withAlpha(colour, weightAlpha(w, top, settings.opacity)));
    }
}

void drawMask(const engine::AttentionResult& r, const engine::ImageGrid& grid, int head, int query, const OverlaySettings& settings,
              QImage& out, OverlayFacts& facts) {
    const engine::WeightTile row = r.weights->tile(head, query, query + 1, 0, r.m, /*withReasons=*/true);
    const ReasonPalette& palette = ReasonPalette::standard();
    const int alpha = static_cast<int>(std::lround(255 * settings.opacity));
    for (std::int64_t cell = 0; cell < grid.cells() && grid.prefix + cell < r.m; ++cell) {
        const std::size_t j = std::size_t(grid.prefix + cell);
        QRgb colour = withAlpha(Qt::black, static_cast<int>(std::lround(alpha * kDimShare)));
        if (row.multiplicity[j] > 0) {
            int reason = 0;
            while (reason < engine::kPatternReasonCount && !(row.reasons[j] & (1u << reason))) ++reason;
            colour = withAlpha(palette.color(reason), alpha);
            ++facts.allowedCells;
        }
        out.setPixel(int(cell % grid.cols), int(cell / grid.cols), colour);
    }
}

void drawGroups(const engine::AttentionResult& r, const engine::ImageGrid& grid, int head, int query,
                const OverlaySettings& settings, QImage& out, OverlayFacts& facts) {
    const engine::VariantInfo* info = engine::findVariantInfo(r.variantId);
    const auto found = info && info->tokenGroups ? r.diagnostics.find(info->tokenGroups->diagnostic) : r.diagnostics.end();
    if (found == r.diagnostics.end() || found->second.shape.size() != 3) {
        facts.message = tr("This variant puts no token in a group: buckets are Reformer's, clusters the Routing Transformer's.");
        return;
    }
    const engine::PlainTensor& groups = found->second;
    const std::int64_t rounds = groups.shape[1], n = groups.shape[2];
    const std::int64_t round = std::clamp<std::int64_t>(settings.round, 0, rounds - 1);
    const auto at = [&](std::int64_t token) { return groups.i64[std::size_t((head * rounds + round) * n + token)]; };
    facts.queryGroup = query < n ? at(query) : -1;
    const CategoricalPalette& palette = CategoricalPalette::standard();
    const int alpha = static_cast<int>(std::lround(255 * settings.opacity));
    for (std::int64_t cell = 0; cell < grid.cells() && grid.prefix + cell < n; ++cell) {
        const long long g = at(grid.prefix + cell);
        if (g == facts.queryGroup) ++facts.sameGroupCells;
        out.setPixel(int(cell % grid.cols), int(cell / grid.cols), withAlpha(palette.color(g), alpha));
    }
}

}  // namespace

QImage valuesOverlay(const engine::ImageGrid& grid, const std::vector<double>& cells, const OverlaySettings& settings, double* topOut) {
    QImage out(int(grid.cols), int(grid.rows), QImage::Format_ARGB32);
    out.fill(Qt::transparent);
    double top = 0;
    for (double v : cells) top = std::max(top, v);
    if (topOut) *topOut = top;
    const Colormap& map = Colormap::builtin(settings.colormap);
    for (std::int64_t cell = 0; cell < std::min<std::int64_t>(grid.cells(), std::int64_t(cells.size())); ++cell) {
        const double v = cells[std::size_t(cell)];
        out.setPixel(int(cell % grid.cols), int(cell / grid.cols),
                     withAlpha(QColor::fromRgb(map.map(top > 0 ? v / top : 0)), weightAlpha(v, top, settings.opacity)));
    }
    return out;
}

QImage keptCellsOverlay(const engine::ImageGrid& grid, const std::vector<std::uint8_t>& kept, const OverlaySettings& settings) {
    QImage out(int(grid.cols), int(grid.rows), QImage::Format_ARGB32);
    out.fill(Qt::transparent);
    const int dim = static_cast<int>(std::lround(255 * settings.opacity * kDimShare));
    for (std::int64_t cell = 0; cell < std::min<std::int64_t>(grid.cells(), std::int64_t(kept.size())); ++cell)
        if (!kept[std::size_t(cell)]) out.setPixel(int(cell % grid.cols), int(cell / grid.cols), withAlpha(Qt::black, dim));
    return out;
}

std::vector<double> layerRowOverCells(const engine::PlainTensor& layer, const engine::ImageGrid& grid, int head, int query) {
    std::vector<double> out;
    if (layer.shape.size() != 3 || head < 0 || head >= layer.shape[0] || query < 0 || query >= layer.shape[1]) return out;
    const std::int64_t n = layer.shape[2];
    const float* row = layer.f32.data() + (std::int64_t(head) * layer.shape[1] + query) * n;
    for (std::int64_t cell = 0; cell < grid.cells() && grid.prefix + cell < n; ++cell) out.push_back(row[grid.prefix + cell]);
    return out;
}

int weightAlpha(double w, double top, double opacity) {
    if (!(top > 0) || !(w > 0)) return 0;
    return static_cast<int>(std::lround(255.0 * opacity * std::min(1.0, w / top)));
}

QImage overlayImage(const engine::RunResult& run, int resultIndex, int head, int query, const OverlaySettings& settings,
                    OverlayFacts* factsOut) {
    OverlayFacts facts;
    QImage out;
    const auto done = [&]() {
        if (factsOut) *factsOut = facts;
        return out;
    };
    if (!run.input.image) {
        facts.message = tr("This run's input is not an image.");
        return done();
    }
    if (resultIndex < 0 || resultIndex >= static_cast<int>(run.results.size())) {
        facts.message = tr("No result.");
        return done();
    }
    const engine::AttentionResult& r = run.results[std::size_t(resultIndex)];
    const engine::ImageGrid& grid = *run.input.image;
    if (!r.weights || head < 0 || head >= r.heads || query < 0 || query >= r.n) {
        facts.message = tr("No weights for this head and query.");
        return done();
    }
    out = QImage(int(grid.cols), int(grid.rows), QImage::Format_ARGB32);
    out.fill(Qt::transparent);
    switch (settings.kind) {
    case OverlayKind::Weights: drawWeights(r, grid, head, query, settings, out, facts); break;
    case OverlayKind::Mask: drawMask(r, grid, head, query, settings, out, facts); break;
    case OverlayKind::Groups: drawGroups(r, grid, head, query, settings, out, facts); break;
    default: facts.message = tr("This picture is drawn from the model's layers (ImageOverlayView)."); break;
    }
    if (!facts.message.isEmpty()) out = QImage();
    return done();
}

}  // namespace attnscope::views
