#include "gui/settings/session.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStringDecoder>
#include <QStringList>

#include <cmath>
#include <limits>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("Session", text); }

/// How far into a file the marker is looked for: sessions we write put it first.
constexpr qsizetype kMarkerWindow = 4096;
/// The compare view shows at most 4 panes: the main variant and 3 compared ones.
constexpr int kMaxCompared = 3;

/// Reads typed fields of one JSON object; the first mismatch is kept as the error.
class FieldReader {
public:
    FieldReader(const QJsonObject& object, QString path, QString* error)
        : m_object(object), m_path(std::move(path)), m_error(error) {}

    bool ok() const { return m_error->isEmpty(); }

    void string(const char* key, QString* out, bool required = false) {
        const QJsonValue v = m_object.value(QLatin1String(key));
        if (v.isUndefined() && !required) return;
        if (!v.isString()) return fail(key, tr("a string"));
        *out = v.toString();
    }
    void choice(const char* key, QString* out, const QStringList& allowed) {
        const QJsonValue v = m_object.value(QLatin1String(key));
        if (v.isUndefined()) return;
        if (!v.isString() || !allowed.contains(v.toString())) return fail(key, tr("one of %1").arg(allowed.join(QStringLiteral(", "))));
        *out = v.toString();
    }
    void integer(const char* key, int* out, int lo, int hi) {
        const QJsonValue v = m_object.value(QLatin1String(key));
        if (v.isUndefined()) return;
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || d < lo || d > hi)
            return fail(key, tr("an integer in [%1, %2]").arg(lo).arg(hi));
        *out = static_cast<int>(d);
    }
    void boolean(const char* key, bool* out) {
        const QJsonValue v = m_object.value(QLatin1String(key));
        if (v.isUndefined()) return;
        if (!v.isBool()) return fail(key, tr("true or false"));
        *out = v.toBool();
    }
    void object(const char* key, QJsonObject* out) {
        const QJsonValue v = m_object.value(QLatin1String(key));
        if (v.isUndefined()) return;
        if (!v.isObject()) return fail(key, tr("an object"));
        *out = v.toObject();
    }

private:
    void fail(const char* key, const QString& expected) {
        if (!m_error->isEmpty()) return;
        *m_error = tr("%1%2 should be %3").arg(m_path.isEmpty() ? QString() : m_path + QLatin1Char('.'), QLatin1String(key), expected);
    }

    QJsonObject m_object;
    QString m_path;
    QString* m_error;
};

QJsonObject section(const QJsonObject& root, const char* key, QString* error) {
    const QJsonValue v = root.value(QLatin1String(key));
    if (v.isUndefined()) return {};
    if (!v.isObject() && error->isEmpty()) *error = tr("%1 should be an object").arg(QLatin1String(key));
    return v.toObject();
}

}  // namespace

QByteArray SessionState::toJson() const {
    QJsonObject root;
    root.insert(QLatin1String(kMarker), kVersion);
    root.insert(QStringLiteral("savedBy"), QStringLiteral("AttnScope %1").arg(QCoreApplication::applicationVersion()));
    root.insert(QStringLiteral("input"), QJsonObject{{QStringLiteral("text"), text},
                                                     {QStringLiteral("source"), textSource},
                                                     {QStringLiteral("tokenizer"), tokenizer}});
    root.insert(QStringLiteral("projection"), QJsonObject{{QStringLiteral("seed"), seed},
                                                          {QStringLiteral("heads"), heads},
                                                          {QStringLiteral("headDim"), headDim}});
    root.insert(QStringLiteral("variant"), QJsonObject{{QStringLiteral("id"), variantId}, {QStringLiteral("params"), params}});
    QJsonArray compared;
    for (const SessionVariant& v : compare)
        compared.append(QJsonObject{{QStringLiteral("id"), v.id}, {QStringLiteral("params"), v.params}});
    root.insert(QStringLiteral("compare"), compared);
    root.insert(QStringLiteral("view"), QJsonObject{{QStringLiteral("tab"), view},
                                                    {QStringLiteral("colormap"), colormap},
                                                    {QStringLiteral("scale"), scale},
                                                    {QStringLiteral("pooling"), pooling},
                                                    {QStringLiteral("maskWeights"), maskWeights}});
    root.insert(QStringLiteral("selection"), QJsonObject{{QStringLiteral("layer"), layer},
                                                         {QStringLiteral("head"), head},
                                                         {QStringLiteral("query"), query}});
    if (!modelFolder.isEmpty())
        root.insert(QStringLiteral("model"), QJsonObject{{QStringLiteral("folder"), modelFolder},
                                                         {QStringLiteral("layer"), modelLayer}});
    if (!imagePath.isEmpty())
        root.insert(QStringLiteral("image"), QJsonObject{{QStringLiteral("path"), imagePath},
                                                         {QStringLiteral("tokens"), imageTokens},
                                                         {QStringLiteral("rows"), imageRows},
                                                         {QStringLiteral("cols"), imageCols},
                                                         {QStringLiteral("patch"), imagePatch},
                                                         {QStringLiteral("fit"), imageFit},
                                                         {QStringLiteral("cls"), imageCls}});
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

const QStringList& Session::viewNames() {
    static const QStringList names{QStringLiteral("heatmap"), QStringLiteral("mask"),  QStringLiteral("compare"),
                                   QStringLiteral("diagnostics"), QStringLiteral("links"), QStringLiteral("cost"),
                                   QStringLiteral("image")};
    return names;
}

FileKind Session::classify(const QByteArray& bytes) {
    if (bytes.contains('\0')) return FileKind::Binary;
    QStringDecoder decoder(QStringDecoder::Utf8);
    const QString text = decoder.decode(bytes);  // decode() is lazy: converting runs it
    if (decoder.hasError()) return FileKind::Binary;
    const QByteArray head = bytes.left(kMarkerWindow).trimmed();
    // A truncated or damaged session still counts as one, so it is refused with a reason instead
    // of being loaded into the editor as text.
    if (head.startsWith('{') && head.contains(QByteArray("\"") + SessionState::kMarker + "\"")) return FileKind::Session;
    return FileKind::Text;
}

std::optional<SessionState> Session::parse(const QByteArray& bytes, const QString& name, QString* error) {
    const auto refuse = [&](const QString& why) {
        *error = tr("%1 was not opened: %2. Nothing was changed.").arg(name, why);
        return std::nullopt;
    };
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return refuse(tr("the session file is damaged (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset));
    if (!doc.isObject()) return refuse(tr("the session file is damaged (no JSON object)"));
    const QJsonObject root = doc.object();
    const QJsonValue marker = root.value(QLatin1String(SessionState::kMarker));
    if (marker.isUndefined()) return refuse(tr("it is not an AttnScope session (no \"%1\" key)").arg(QLatin1String(SessionState::kMarker)));
    const double version = marker.toDouble(std::nan(""));
    if (!marker.isDouble() || version != std::floor(version) || version < 1)
        return refuse(tr("the session file is damaged (\"%1\" is not a format number)").arg(QLatin1String(SessionState::kMarker)));
    if (version > SessionState::kVersion)
        return refuse(tr("it was saved by a newer AttnScope (session format %1; this version reads format %2)")
                          .arg(version, 0, 'g', 17)
                          .arg(SessionState::kVersion));

    SessionState s;
    QString problem;
    const QJsonObject input = section(root, "input", &problem);
    const QJsonObject projection = section(root, "projection", &problem);
    const QJsonObject variant = section(root, "variant", &problem);
    const QJsonValue compare = root.value(QLatin1String("compare"));
    const QJsonObject view = section(root, "view", &problem);
    const QJsonObject selection = section(root, "selection", &problem);
    const QJsonObject model = section(root, "model", &problem);
    const QJsonObject image = section(root, "image", &problem);
    if (problem.isEmpty() && !input.value(QLatin1String("text")).isString()) problem = tr("input.text is missing");
    if (problem.isEmpty() && !variant.value(QLatin1String("id")).isString()) problem = tr("variant.id is missing");
    FieldReader in(input, QStringLiteral("input"), &problem);
    in.string("text", &s.text, true);
    in.string("source", &s.textSource);
    in.choice("tokenizer", &s.tokenizer, {QStringLiteral("words"), QStringLiteral("chars"), QStringLiteral("bytes")});
    FieldReader proj(projection, QStringLiteral("projection"), &problem);
    proj.integer("seed", &s.seed, 0, std::numeric_limits<int>::max());
    proj.integer("heads", &s.heads, 1, 64);
    proj.integer("headDim", &s.headDim, 1, 1024);
    FieldReader var(variant, QStringLiteral("variant"), &problem);
    var.string("id", &s.variantId, true);
    var.object("params", &s.params);
    if (!compare.isUndefined() && (!compare.isArray() || compare.toArray().size() > kMaxCompared) && problem.isEmpty())
        problem = tr("compare should be an array of at most %1 variants").arg(kMaxCompared);
    const QJsonArray compared = compare.toArray();
    for (qsizetype i = 0; i < compared.size() && problem.isEmpty(); ++i) {
        const QString path = QStringLiteral("compare[%1]").arg(i);
        if (!compared[i].isObject()) {
            problem = tr("%1 should be an object").arg(path);
            break;
        }
        SessionVariant v;
        if (!compared[i].toObject().value(QLatin1String("id")).isString()) problem = tr("%1.id is missing").arg(path);
        FieldReader row(compared[i].toObject(), path, &problem);
        row.string("id", &v.id, true);
        row.object("params", &v.params);
        s.compare.append(v);
    }
    FieldReader v(view, QStringLiteral("view"), &problem);
    v.choice("tab", &s.view, viewNames());
    v.choice("colormap", &s.colormap,
             {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("cividis"), QStringLiteral("rdbu")});
    v.choice("scale", &s.scale, {QStringLiteral("linear"), QStringLiteral("log")});
    v.choice("pooling", &s.pooling, {QStringLiteral("max"), QStringLiteral("mean")});
    v.boolean("maskWeights", &s.maskWeights);
    FieldReader sel(selection, QStringLiteral("selection"), &problem);
    sel.integer("layer", &s.layer, 0, 4096);
    sel.integer("head", &s.head, 0, 4096);
    sel.integer("query", &s.query, -1, std::numeric_limits<int>::max());
    FieldReader source(model, QStringLiteral("model"), &problem);
    source.string("folder", &s.modelFolder, !model.isEmpty());
    source.integer("layer", &s.modelLayer, 0, 4096);
    FieldReader picture(image, QStringLiteral("image"), &problem);
    picture.string("path", &s.imagePath, !image.isEmpty());
    picture.choice("tokens", &s.imageTokens, {QStringLiteral("pixels"), QStringLiteral("patches")});
    picture.integer("rows", &s.imageRows, 1, 1024);
    picture.integer("cols", &s.imageCols, 1, 1024);
    picture.integer("patch", &s.imagePatch, 1, 4096);
    picture.choice("fit", &s.imageFit, {QStringLiteral("crop"), QStringLiteral("pad")});
    picture.boolean("cls", &s.imageCls);
    // (a model or picture section names its folder or picture: without one the writer leaves the
    // section out, and the next save would drop the rest of it; found by fuzz_session)
    if (problem.isEmpty() && !model.isEmpty() && s.modelFolder.isEmpty()) problem = tr("model.folder is empty");
    if (problem.isEmpty() && !image.isEmpty() && s.imagePath.isEmpty()) problem = tr("image.path is empty");
    if (!problem.isEmpty()) return refuse(tr("the session file is damaged (%1)").arg(problem));
    return s;
}

std::optional<QByteArray> Session::readFile(const QString& path, QString* error) {
    const QString name = QFileInfo(path).fileName();
    QFile file(path);
    if (!QFileInfo(path).isFile() || !file.open(QIODevice::ReadOnly)) {
        *error = tr("Cannot open %1: %2").arg(name, QFileInfo::exists(path) ? file.errorString() : tr("no such file"));
        return std::nullopt;
    }
    if (file.size() > kMaxFileBytes) {
        *error = tr("%1 is too large to open (%2 MB; at most %3 MB).")
                     .arg(name)
                     .arg(file.size() / (1024 * 1024))
                     .arg(kMaxFileBytes / (1024 * 1024));
        return std::nullopt;
    }
    return file.readAll();
}

QString Session::write(const QString& path, const SessionState& state) {
    QSaveFile file(path);
    const QByteArray bytes = state.toJson();
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return tr("Cannot save the session to %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
    return {};
}

}  // namespace attnscope::app
