#pragma once
// The whole working state of the window as a versioned JSON file (docs/SESSIONS.md): input text,
// tokenizer, Q/K/V settings or the model layer they come from, the variant and the compare
// variant with their parameters, the view tab and its settings, the selected layer, head and
// query. Parsing checks the file completely before anything is applied, so a refused file changes
// nothing the user typed.

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <QString>

#include <optional>

namespace attnscope::app {

/// A variant and its parameters as typed JSON values (checked against the schema when applied).
struct SessionVariant {
    QString id;
    QJsonObject params;
    friend bool operator==(const SessionVariant& a, const SessionVariant& b) { return a.id == b.id && a.params == b.params; }
};

struct SessionState {
    /// The format this build writes and the newest it reads.
    static constexpr int kVersion = 1;
    /// Top-level key holding the version; also how a dropped file is recognised as a session.
    static constexpr const char* kMarker = "attnscopeSession";

    QString text;
    QString textSource;  ///< the window title's source ("sample.txt"); may be empty
    QString tokenizer = QStringLiteral("words");  ///< "words" | "chars" | "bytes"
    int seed = 0;
    int heads = 4;
    int headDim = 32;
    QString variantId;
    QJsonObject params;  ///< typed JSON values, checked against the schema when applied
    /// The "Compare with" rows (1–3 variants beside the main one); empty = none chosen.
    QList<SessionVariant> compare;
    QString view = QStringLiteral("heatmap");  ///< heatmap | mask | compare | diagnostics | links | cost
    QString colormap = QStringLiteral("viridis");
    QString scale = QStringLiteral("linear");
    QString pooling = QStringLiteral("max");
    bool maskWeights = false;
    int layer = 0;
    int head = 0;
    int query = -1;  ///< the mask view's row panel; -1 = none
    /// The Q/K/V source when it is a layer of an opened model: its folder (as opened) and layer.
    /// Empty = seeded random projections (the "projection" settings).
    QString modelFolder;
    int modelLayer = 0;
    /// The picture that was the input instead of the text (docs/SESSIONS.md): its file, absolute,
    /// and how it became tokens. Empty path = the text was the input.
    QString imagePath;
    QString imageTokens = QStringLiteral("pixels");  ///< "pixels" | "patches"
    int imageRows = 32, imageCols = 32, imagePatch = 16;
    QString imageFit = QStringLiteral("crop");       ///< "crop" | "pad"
    bool imageCls = false;

    QByteArray toJson() const;

    friend bool operator==(const SessionState& a, const SessionState& b) {
        return a.text == b.text && a.textSource == b.textSource && a.tokenizer == b.tokenizer && a.seed == b.seed &&
               a.heads == b.heads && a.headDim == b.headDim && a.variantId == b.variantId && a.params == b.params &&
               a.compare == b.compare && a.view == b.view &&
               a.colormap == b.colormap && a.scale == b.scale && a.pooling == b.pooling &&
               a.maskWeights == b.maskWeights && a.layer == b.layer && a.head == b.head && a.query == b.query &&
               a.modelFolder == b.modelFolder && a.modelLayer == b.modelLayer && a.imagePath == b.imagePath &&
               a.imageTokens == b.imageTokens && a.imageRows == b.imageRows && a.imageCols == b.imageCols &&
               a.imagePatch == b.imagePatch && a.imageFit == b.imageFit && a.imageCls == b.imageCls;
    }
    friend bool operator!=(const SessionState& a, const SessionState& b) { return !(a == b); }
};

/// What a file (opened, dropped or picked from Recent) holds, judged by content, not by name.
enum class FileKind {
    Session,  ///< a JSON object with the session marker (possibly corrupted further on)
    Text,     ///< valid UTF-8 without NUL bytes
    Binary,   ///< anything else
};

class Session {
public:
    /// Files larger than this are refused when opened or dropped (a text field holding hundreds of
    /// megabytes would freeze the editor, not show attention).
    static constexpr qint64 kMaxFileBytes = 32 * 1024 * 1024;

    static FileKind classify(const QByteArray& bytes);
    /// The tabs a session can name (SessionState::view).
    static const QStringList& viewNames();

    /// Parses a session; on failure returns nullopt and a message naming the problem (newer
    /// format, not JSON, a field of the wrong type). `name` starts the message.
    static std::optional<SessionState> parse(const QByteArray& bytes, const QString& name, QString* error);

    /// Reads a file with the size cap; nullopt and *error when it cannot be read.
    static std::optional<QByteArray> readFile(const QString& path, QString* error);
    /// Writes atomically (QSaveFile); empty string on success, else the message.
    static QString write(const QString& path, const SessionState& state);
};

}  // namespace attnscope::app
