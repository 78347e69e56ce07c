#pragma once
// Display text of a token for axes and tooltips.

#include <attnscope/types.h>

#include <QHash>
#include <QString>

class QFont;

#include <string>

namespace attnscope::views {

/// Token bytes as readable text: white space becomes a visible symbol (␣ ⏎ ⇥), bytes that are
/// not valid UTF-8 on their own (a lone byte of the bytes tokenizer) become "0xNN". Longer than
/// maxChars is elided with "…". The result is plain text; escape it before rich-text use.
QString tokenLabel(const std::string& bytes, int maxChars = 14);

/// Every step-th token label on an axis of `pixels` showing `cells` tokens, so that labels in
/// `font` (a line each, with a little air) never overlap: 1 when every label has room.
int tokenLabelStep(double pixels, double cells, const QFont& font);

/// The noun for n in titles: "words", "chars", "bytes", "tokens" (a model's tokenizer), or
/// "positions" when Q/K/V came without tokens.
QString tokenUnit(const engine::TokenizedInput& input);

/// Where Q, K, V came from, for titles and captions: "model NAME, layer L" (NAME = the model
/// folder's name, L = the model's own layer index) or an empty string for random projections and
/// explicit Q/K/V.
QString qkvSourceText(const engine::RunResult& run);

/// The name a result goes by in titles, captions and panes: the model layer's own attention as
/// such ("own attention of layer 3 (Mistral)"), a variant run on a model layer as "Longformer on
/// layer 3's Q/K", elsewhere the variant's display name (`variantNames`: id -> name).
QString resultName(const engine::RunResult& run, std::size_t index, const QHash<QString, QString>& variantNames);

}  // namespace attnscope::views
