#include "views/help/guided_tour.h"

#include <attnscope/variant_catalog.h>

#include <QCoreApplication>

namespace attnscope::views {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("GuidedTour", text); }

}  // namespace

const std::vector<TourStep>& guidedTour() {
    // Exact softmax by the catalog's word for it; the others are the ones the text talks about.
    const QString exact = QString::fromStdString(engine::exactReference().id);
    static const std::vector<TourStep> steps = {
        {QStringLiteral("heatmap"), exact, {}, false, tr("1. One head of attention"),
         tr("Each row is a query token, each column a key token; a cell's colour is how much the query "
            "looks at that key, and every row sums to 1. This is full softmax attention: every token "
            "scores every other, n² scores. Hover a cell (or click and use the arrow keys) to read its "
            "weight. Q, K and V come from seeded random projections here, so the pattern shows the "
            "mechanism, not language.")},
        {QStringLiteral("mask"), QStringLiteral("longformer"), {}, false, tr("2. What an efficient variant allows"),
         tr("Longformer lets each token see only a window of neighbours (here 4 on each side), plus any "
            "global tokens. The Mask tab colours every allowed (query, key) pair by why it is allowed; "
            "blank pairs are never scored. That is where the saving comes from: about n · (2w + 1) "
            "scores instead of n². Hover a row to list its keys on the right.")},
        {QStringLiteral("compare"), exact, {QStringLiteral("longformer"), QStringLiteral("sparse_strided")}, false,
         tr("3. Side by side, on the same Q, K, V"),
         tr("Full attention beside Longformer and the Sparse Transformer's strided pattern (a local block "
            "plus every l-th key), one colour scale for all. The difference map below shows where a "
            "variant moves weight, and the table measures it against full attention: mean L1 (0 = "
            "identical, 2 = disjoint), KL, and the share of full attention's mass the pattern keeps.")},
        {QStringLiteral("diagnostics"), QStringLiteral("reformer"), {}, false, tr("4. Inside a variant"),
         tr("Reformer does not use a fixed pattern: it hashes queries and keys into buckets (locality-"
            "sensitive hashing) and attends only within a bucket's chunk. The Diagnostics tab shows each "
            "token's bucket in every hash round. Other variants show their own workings here: k-means "
            "clusters, Linformer's spectrum, Star-Transformer's ring and relay, Transformer-XL's memory.")},
        {QStringLiteral("links"), exact, {}, false, tr("5. Token to token"),
         tr("The same head as lines from each query (left) to the keys it attends (right), the strongest "
            "few per token. Hover a token to isolate its links. Ctrl+F finds a token in every view.")},
        {QStringLiteral("cost"), QStringLiteral("longformer"), {}, false, tr("6. What it costs"),
         tr("Time and memory of this run, and Measure: every ticked variant at growing lengths on log-log "
            "axes. A slope of 2 means the cost grows as n², a slope of 1 as n: that is why efficient "
            "variants exist, and why they matter only on long inputs.")},
        {QStringLiteral("atlas"), QString(), {}, true, tr("7. A trained model's heads"),
         tr("Now a small trained model: the Atlas colours each layer × head by what it does (entropy, "
            "distance, attention to itself or its neighbours) and by how much of it each efficient "
            "variant would keep. Click a head to compare it with the variants that replace it best. "
            "That is the end of the tour: F1 explains whatever tab you are on.")},
    };
    return steps;
}

}  // namespace attnscope::views
