#include "views/help/view_guide.h"

#include <QCoreApplication>

namespace attnscope::views {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ViewGuide", text); }

QString escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

// What kind of attention the variant computes, in one sentence a student can place.
QString kindOf(const engine::VariantInfo& v) {
    if (v.exact) return tr("Exact softmax over every key: the reference the other variants are measured against. "
                           "Time and memory grow as n² with the number of tokens n.");
    if (v.approximatesSoftmax)
        return tr("Approximates softmax without computing the n × n scores (kernels, random features or low rank): "
                  "every key gets some weight, and the Diagnostics tab measures how far the result is from exact softmax.");
    if (v.extraKeys > 0)
        return tr("Replaces full attention by a structure with extra keys (%1 beyond the tokens); each token sees a few "
                  "neighbours directly and the rest through them.").arg(v.extraKeys);
    return tr("Exact softmax restricted to a sparse pattern: each query attends only the keys its pattern allows "
              "(the Mask tab colours them by why), so time and memory grow with the allowed entries, not n².");
}

}  // namespace

QStringList viewGuideKeys() {
    return {QStringLiteral("heatmap"), QStringLiteral("mask"),  QStringLiteral("compare"), QStringLiteral("diagnostics"),
            QStringLiteral("links"),   QStringLiteral("cost"),  QStringLiteral("atlas"),   QStringLiteral("experts"),
            QStringLiteral("image"),   QStringLiteral("neuron"), QStringLiteral("qkmap"),
            QStringLiteral("context")};
}

ViewGuide viewGuide(const QString& key) {
    if (key == QLatin1String("heatmap"))
        return {tr("Heatmap"),
                tr("The attention weights of one head: row i is query token i, column j is key token j, and the colour is "
                   "how much of query i's output comes from key j's value. Every row sums to 1. The strip above shows "
                   "every head of the run as a thumbnail; click one to show it here."),
                tr("Bright cells are the keys a query listens to. A bright diagonal means each token looks at itself, a "
                   "band beside it at its neighbours, a bright column at one token everybody reads (a \"global\" token). "
                   "Blank cells are keys outside the variant's pattern, which get exactly 0. Long inputs are pooled: a "
                   "cell then stands for a block of queries and keys (the title says how many); zoom in to see single "
                   "tokens."),
                tr("Hover a cell for its query, key and weight, or click and move with the arrow keys. Try the log scale "
                   "to see small weights, Page Up / Page Down to step through the heads, and Ctrl+F to find a token. "
                   "With a model open (a folder or a GGUF file), Generate (Ctrl+G) lets it continue your text: while it "
                   "writes, the heatmap grows a row per token, the row the newest was written from (the token before it) "
                   "selected — what the model looked at when it wrote it — and the written tokens marked; when it stops "
                   "(Esc keeps what was written), the whole sequence is run.")};
    if (key == QLatin1String("mask"))
        return {tr("Mask"),
                tr("The variant's connectivity: which keys each query may attend, coloured by the reason the pattern "
                   "allows it (local window, global token, random block, stride, …). It is the structure, before any "
                   "weight is computed."),
                tr("The legend counts the entries of each reason; blank means not allowed. Hover or click a row to list "
                   "its allowed keys, the ones whose weight is exactly zero, and the row's entropy. \"Weights inside the "
                   "pattern\" shades the allowed cells by their weight."),
                tr("Compare Longformer (a band plus global columns), BigBird (blocks, globals and random blocks) and the "
                   "Sparse Transformer (strides): the picture is the paper's figure, computed on your text.")};
    if (key == QLatin1String("compare"))
        return {tr("Compare"),
                tr("Two to four variants side by side, on the same queries, keys and values, with the difference to exact "
                   "softmax and an error summary."),
                tr("Hovering one pane marks the same cell in the others. The Difference map tab is red where a variant gives "
                   "more weight than exact softmax and blue where it gives less (white: the same). The Errors tab gives per "
                   "row the L1 distance of the weights, the KL divergence where it is defined, and the share of exact "
                   "softmax's mass the pattern keeps."),
                tr("Add variants under \"Compare with\" in the left panel. A sparse pattern that keeps 95 % of the mass "
                   "changes the output little; an approximation can be close on average and wrong on single rows.")};
    if (key == QLatin1String("diagnostics"))
        return {tr("Diagnostics"),
                tr("The variant's inner workings: Reformer's hash buckets and sorted chunks, the Routing Transformer's "
                   "k-means clusters, the approximation error of Performer, Linformer and the Linear Transformer (with "
                   "Linformer's spectrum), Transformer-XL's memory, score terms and receptive field, and the "
                   "Star-Transformer's ring and relay, cycle by cycle. On a layer of a model with rotary positions "
                   "(Llama, Mistral, Qwen), a variant without a page of its own shows the head's mean score by relative "
                   "distance, with the rotation and with it removed: RoPE's decay. Today's models add their own pages: "
                   "Soft-cap (Gemma 2: the share of scores the cap flattens, per head), Sinks (GPT-OSS: the weight each "
                   "head gives its learned sink, no token) and Latent keys (DeepSeek: the keys' rank against the "
                   "latent they come from, and each head's rotary share of its score)."),
                tr("Each page explains its own axes. Approximations show their error against exact softmax on the same "
                   "Q, K, V, and an error curve over the parameter that trades accuracy for speed."),
                tr("Press \"Compute error curve\" on an approximation to see how the error falls as the number of "
                   "features or the projected length grows. A Performer curve stays flat on random projections (their "
                   "keys are long, and feature_eps outweighs the features; the page says so): tick \"Q, K at norm d^¼\" "
                   "to see the paper's 1/√features fall.")};
    if (key == QLatin1String("links"))
        return {tr("Links"),
                tr("The tokens as two columns, queries on the left and keys on the right, joined by a line for every "
                   "weight above the threshold (by default the strongest few per token); the line's opacity is the weight."),
                tr("Hover a token to see only its links. Move the threshold to see more or fewer lines; Auto brings back "
                   "the strongest few per token. A taller window shows more tokens at once."),
                tr("On a trained model, follow a pronoun to the noun it attends.")};
    if (key == QLatin1String("cost"))
        return {tr("Cost"),
                tr("What the run cost: time per stage and peak memory, and the scaling of time and memory with the length "
                   "of the input, measured the Long Range Arena way (a fresh run per length)."),
                tr("On the log-log plots a straight line of slope 2 is quadratic growth (exact attention), slope 1 is "
                   "linear. Exact attention here is computed in blocks and keeps no n × n matrix, so its memory grows "
                   "more slowly than its time."),
                tr("Run the scaling sweep with a sparse variant and full on the same lengths: the gap is what the "
                   "efficient variants are for.")};
    if (key == QLatin1String("atlas"))
        return {tr("Atlas"),
                tr("With a model open, every head of every layer measured: its entropy, how positional it is (previous "
                   "token, first token, diagonal), and how much of its attention each sparse pattern keeps."),
                tr("A head whose attention a Longformer window keeps almost entirely could run sparsely at little cost; "
                   "a head that needs far keys could not. The model's recorded training accuracy says whether the "
                   "heads learned anything."),
                tr("Click a head to open it in Compare against its best-matching pattern.")};
    if (key == QLatin1String("experts"))
        return {tr("Experts"),
                tr("Mixture-of-experts routing (the Switch Transformer): a router sends each token to one expert (or k); "
                   "each expert takes at most its capacity of tokens, and the rest are dropped."),
                tr("Tokens are coloured by their expert, the opacity is the router's gate, struck-through tokens were "
                   "dropped. The bars show each expert's load against its capacity and against a balanced load."),
                tr("Lower the capacity factor and watch tokens drop; raise the number of experts and watch some of them "
                   "go idle.")};
    if (key == QLatin1String("image"))
        return {tr("Image"),
                tr("A run on a picture (File ▸ Open Image…, or drop one on the window): each pixel of the grid, or each "
                   "patch, is a token. Drawn over the picture: the selected head's weights from the query cell, the keys it "
                   "may attend coloured by reason, or Reformer's buckets and the Routing Transformer's clusters. With a "
                   "vision model (ViT, DeiT, DINO) open: the head in every layer, attention rollout through all layers, "
                   "and DINO's view of the patches that hold most of the attention."),
                tr("The outlined cell is the query; the brighter a cell, the more of the query's output comes from it. "
                   "The line under the picture gives the largest weight, the share the CLS token takes, and the exact "
                   "weight of the cell under the pointer. Strided and fixed on a pixel grid are the Sparse Transformer's "
                   "Fig. 3: the row so far and the column above."),
                tr("Click a cell to make it the query (every tab follows). Tick All heads to see every head at once; with a "
                   "ViT, choose Rollout and try the max fusion, or DINO with share 0.6, on a photo of one object.")};
    if (key == QLatin1String("neuron"))
        return {tr("Neuron"),
                tr("Why the selected head's query attends where it does (BertViz's neuron view). Each row is one of the "
                   "keys it weighs most, each cell one dimension c of the product q_c · k_c: a row's cells add up to the dot "
                   "product q · k, which times the scale (plus the variant's own terms, such as a model's relative bias) is "
                   "the score the softmax turns into the weight drawn on the right — the heatmap's weight. The bars in "
                   "the middle split each score into the scaled dot (grey) and the variant's own terms (orange)."),
                tr("Red cells add to the score, blue ones take from it: a few strong columns mean a few dimensions decide "
                   "the pattern. Hover a cell for q_c and k_c. Change the query with the box, or hover a token in the "
                   "Heatmap or Links tab; Page Up / Page Down step through the heads. On a rotary layer, Before rotation "
                   "shows q and k with the positions' turn undone: what the head scores by content alone."),
                tr("On a trained model, pick a token that attends to the previous one and look for the dimensions every "
                   "strong row shares (attnscope-cli neuron gives the same numbers as JSON).")};
    if (key == QLatin1String("qkmap"))
        return {tr("Q–K map"),
                tr("Every query (●) and key (▲) of the selected head in one plane (AttentionViz's query–key map): the "
                   "two directions along which the vectors spread most (PCA). First the keys are moved so that their mean is "
                   "the queries' mean, and both are rescaled to equal mean lengths; neither changes any weight, but queries "
                   "and keys then share the picture instead of two far-apart clouds."),
                tr("A query's score with a key grows with how far the key lies along the query's direction, so the keys a "
                   "query weighs most tend to sit on its side. The red lines join the selected query to the keys it weighs "
                   "most (the heatmap's weights). Colour by position to see whether the head sorts tokens by where they are."),
                tr("Click a query to see its strongest keys; every tab selects the same token. Tick All heads to compare "
                   "every head's map at once and click one to see it large. Untick both boxes to see the "
                   "raw vectors; place them by t-SNE or UMAP to see which tokens the head groups together (attnscope-cli qkmap "
                   "writes the points as CSV).")};
    if (key == QLatin1String("context"))
        return {tr("Context"),
                tr("Where else the open model represents a token the same way (exBERT's context search). Choose a corpus, "
                   "a text file: the model reads it once, line by line, and keeps every token's vectors at every layer in "
                   "an index beside the model, so the next time it is read back at once. Each row is a corpus token whose "
                   "vector at the shown layer points most nearly the way the selected token's does (cosine 1: the same "
                   "direction), with the corpus around it and the key that corpus token weighed most in the selected head."),
                tr("Hidden states compare what the layer writes (its output): near matches share meaning or role in this "
                   "layer's eyes. Keys and queries compare the selected head's own vectors: tokens with near keys are "
                   "looked at by the same queries. High cosines with the same word in other contexts suggest the layer "
                   "still tracks the word; other words suggest it tracks a role, such as 'the word after a comma'."),
                tr("Run a layer of the model, hover a token in the Heatmap (or pick it with the Token box) and compare "
                   "layer 0 with the last layer. Without a model, the run's random projections index the corpus: compare "
                   "their keys or queries. attnscope-cli context gives the same list as JSON.")};
    return {};
}

QString helpPageHtml(const QString& viewKey, const engine::VariantInfo* variant) {
    QString html;
    const ViewGuide guide = viewGuide(viewKey);
    if (!guide.title.isEmpty()) {
        html += QStringLiteral("<h2>%1</h2>").arg(guide.title.toHtmlEscaped());
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("What it shows."), guide.shows.toHtmlEscaped());
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("How to read it."), guide.read.toHtmlEscaped());
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("Try."), guide.tips.toHtmlEscaped());
    }
    if (variant) {
        html += QStringLiteral("<h2>%1</h2>").arg(escaped(variant->name));
        html += QStringLiteral("<p>%1</p>").arg(kindOf(*variant).toHtmlEscaped());
        html += QStringLiteral("<p>%1</p>").arg(escaped(variant->summary));
        if (!variant->lraSpeedup.empty())
            html += QStringLiteral("<p>%1</p>").arg(tr("Long Range Arena speed-up over vanilla at 4K tokens (TPU): %1.")
                                                        .arg(escaped(variant->lraSpeedup)));
        if (!variant->params.empty()) {
            html += QStringLiteral("<p><b>%1</b></p><ul>").arg(tr("Parameters"));
            for (const auto& p : variant->params)
                html += QStringLiteral("<li><b>%1</b> — %2</li>").arg(escaped(p.name), escaped(p.help));
            html += QStringLiteral("</ul>");
        }
        html += QStringLiteral("<p><i>%1</i></p>").arg(escaped(variant->paper));
    }
    return html;
}

QString shortcutsHtml() {
    const QList<QPair<QString, QString>> rows = {
        {QStringLiteral("F5, Ctrl+R"), tr("Run")},
        {QStringLiteral("Esc"), tr("Cancel the run")},
        {QStringLiteral("Page Up / Page Down"), tr("Previous / next head")},
        {QStringLiteral("Ctrl+E"), tr("Export the figure of the shown tab")},
        {QStringLiteral("Ctrl+O, Ctrl+S"), tr("Open / save a session")},
        {QStringLiteral("Ctrl+Shift+O"), tr("Open a text file")},
        {QStringLiteral("Ctrl+I"), tr("Open an image")},
        {QStringLiteral("F1"), tr("Show or hide this help")},
    };
    QString html = QStringLiteral("<h3>%1</h3><table cellspacing='4'>").arg(tr("Keyboard"));
    for (const auto& [keys, what] : rows)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys.toHtmlEscaped(), what.toHtmlEscaped());
    return html + QStringLiteral("</table>");
}

}  // namespace attnscope::views
