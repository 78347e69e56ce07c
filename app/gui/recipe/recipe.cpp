#include "gui/recipe/recipe.h"

#include "gui/recipe/sweep_csv.h"

#include "gui/settings/param_json.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QStringDecoder>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("Recipe", text); }

constexpr int kMinSide = 16;
constexpr int kMaxSide = 8000;
constexpr int kMinDpi = 72;
constexpr int kMaxDpi = 1200;
constexpr int kMaxFileNameLength = 200;
/// The compare view has at most 4 panes: the variant and three compared with it.
constexpr int kMaxCompared = 3;

const QStringList& topKeys() {
    static const QStringList keys{QStringLiteral("recipe"),  QStringLiteral("title"),   QStringLiteral("inputs"),
                                  QStringLiteral("tokenizer"), QStringLiteral("seed"),  QStringLiteral("heads"),
                                  QStringLiteral("headDim"), QStringLiteral("variants"), QStringLiteral("defaults"),
                                  QStringLiteral("figures")};
    return keys;
}

/// Keys a figure may set; "defaults" may set all of them except "file".
const QStringList& figureKeys() {
    static const QStringList keys{
        QStringLiteral("file"),    QStringLiteral("view"),     QStringLiteral("input"),    QStringLiteral("variant"),
        QStringLiteral("compareWith"), QStringLiteral("head"), QStringLiteral("width"),    QStringLiteral("height"),
        QStringLiteral("dpi"),     QStringLiteral("formats"),  QStringLiteral("sidecar"),  QStringLiteral("colormap"),
        QStringLiteral("scale"),   QStringLiteral("pooling"),  QStringLiteral("maskWeights"), QStringLiteral("sweep"),
        QStringLiteral("slide")};
    return keys;
}

/// Checks and reads one recipe; the first error stops it (messages name the JSON path).
class Reader {
public:
    Reader(QString baseDir, QString displayName, const std::vector<engine::VariantInfo>& registry)
        : m_baseDir(std::move(baseDir)), m_name(std::move(displayName)), m_registry(registry) {}

    std::optional<Recipe> read(const QByteArray& json, RecipeError* error) {
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
        if (parseError.error != QJsonParseError::NoError) {
            fail(tr("not valid JSON: %1 at byte %2").arg(parseError.errorString()).arg(parseError.offset));
        } else if (!doc.isObject()) {
            fail(tr("expected a JSON object at the top level"));
        } else {
            Recipe recipe;
            if (readRecipe(doc.object(), recipe)) return recipe;
        }
        *error = m_error;
        return std::nullopt;
    }

private:
    bool fail(const QString& message, RecipeError::Kind kind = RecipeError::Kind::Invalid) {
        m_error.kind = kind;
        m_error.message = m_name + QStringLiteral(": ") + message;
        return false;
    }

    bool checkKeys(const QJsonObject& object, const QString& path, const QStringList& allowed) {
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (!allowed.contains(it.key()))
                return fail(tr("%1: unknown key \"%2\" (allowed: %3)")
                                .arg(path.isEmpty() ? tr("top level") : path, it.key(), allowed.join(QStringLiteral(", "))));
        }
        return true;
    }

    bool readInt(const QJsonValue& value, const QString& path, int lo, int hi, int* out) {
        const double v = value.toDouble(std::nan(""));
        if (!value.isDouble() || v != std::floor(v) || v < lo || v > hi)
            return fail(tr("%1: expected an integer in [%2, %3]").arg(path).arg(lo).arg(hi));
        *out = static_cast<int>(v);
        return true;
    }

    bool readString(const QJsonValue& value, const QString& path, QString* out) {
        if (!value.isString() || value.toString().isEmpty()) return fail(tr("%1: expected a non-empty string").arg(path));
        *out = value.toString();
        return true;
    }

    bool readChoice(const QJsonValue& value, const QString& path, const QStringList& choices, QString* out) {
        if (!value.isString() || !choices.contains(value.toString()))
            return fail(tr("%1: expected one of %2").arg(path, choices.join(QStringLiteral(", "))));
        *out = value.toString();
        return true;
    }

    bool readBool(const QJsonValue& value, const QString& path, bool* out) {
        if (!value.isBool()) return fail(tr("%1: expected true or false").arg(path));
        *out = value.toBool();
        return true;
    }

    bool readRecipe(const QJsonObject& root, Recipe& recipe) {
        if (!checkKeys(root, {}, topKeys())) return false;
        if (!root.contains(QLatin1String("recipe")))
            return fail(tr("missing \"recipe\": the format version (%1)").arg(Recipe::kVersion));
        const QJsonValue version = root.value(QLatin1String("recipe"));
        if (version.isDouble() && version.toDouble() > Recipe::kVersion && version.toDouble() == std::floor(version.toDouble()))
            return fail(tr("recipe format %1 is newer than this AttnScope reads (%2); update AttnScope")
                            .arg(version.toInt())
                            .arg(Recipe::kVersion));
        int v = 0;
        if (!readInt(version, QStringLiteral("recipe"), 1, Recipe::kVersion, &v)) return false;
        if (root.contains(QLatin1String("title")) && !readString(root.value(QLatin1String("title")), QStringLiteral("title"), &recipe.title))
            return false;
        if (root.contains(QLatin1String("tokenizer"))) {
            QString name;
            if (!readChoice(root.value(QLatin1String("tokenizer")), QStringLiteral("tokenizer"),
                            {QStringLiteral("words"), QStringLiteral("chars"), QStringLiteral("bytes")}, &name))
                return false;
            recipe.tokenizer = name == QLatin1String("chars")   ? engine::TokenizerKind::Chars
                               : name == QLatin1String("bytes") ? engine::TokenizerKind::Bytes
                                                                : engine::TokenizerKind::Words;
        }
        int seed = 0, heads = recipe.projection.heads, headDim = recipe.projection.headDim;
        if (root.contains(QLatin1String("seed")) &&
            !readInt(root.value(QLatin1String("seed")), QStringLiteral("seed"), 0, std::numeric_limits<int>::max(), &seed))
            return false;
        if (root.contains(QLatin1String("heads")) && !readInt(root.value(QLatin1String("heads")), QStringLiteral("heads"), 1, 64, &heads))
            return false;
        if (root.contains(QLatin1String("headDim")) &&
            !readInt(root.value(QLatin1String("headDim")), QStringLiteral("headDim"), 1, 1024, &headDim))
            return false;
        recipe.projection.seed = static_cast<std::uint64_t>(seed);
        recipe.projection.heads = heads;
        recipe.projection.headDim = headDim;
        // A recipe of sweep figures only draws tables it reads: it needs no input and no variant.
        const bool runsNothing = onlySweeps(root);
        return (runsNothing && !root.contains(QLatin1String("variants")) ? true : readVariants(root, recipe)) &&
               (runsNothing && !root.contains(QLatin1String("inputs")) ? true : readInputs(root, recipe)) &&
               readFigures(root, recipe);
    }

    static bool onlySweeps(const QJsonObject& root) {
        const QJsonObject defaults = root.value(QLatin1String("defaults")).toObject();
        const QJsonArray figures = root.value(QLatin1String("figures")).toArray();
        if (figures.isEmpty()) return false;
        for (const QJsonValue& figure : figures) {
            const QJsonObject own = figure.toObject();
            const QJsonValue view = own.contains(QLatin1String("view")) ? own.value(QLatin1String("view")) : defaults.value(QLatin1String("view"));
            if (view.toString() != QLatin1String("sweep")) return false;
        }
        return true;
    }

    bool readSweep(const QJsonValue& value, const QString& path, RecipeFigure& figure) {
        if (!readString(value, path, &figure.sweepFile)) return false;
        const QString file = QDir(m_baseDir).filePath(figure.sweepFile);
        QFile in(file);
        if (!in.open(QIODevice::ReadOnly))
            return fail(tr("%1: cannot read %2: %3").arg(path, QDir::toNativeSeparators(file), in.errorString()),
                        RecipeError::Kind::Input);
        QString problem;
        auto points = parseSweepCsv(QString::fromUtf8(in.readAll()), &problem);
        if (!points) return fail(tr("%1: %2: %3").arg(path, QDir::toNativeSeparators(file), problem));
        figure.sweep = std::move(*points);
        return true;
    }

    bool readVariants(const QJsonObject& root, Recipe& recipe) {
        const QJsonValue value = root.value(QLatin1String("variants"));
        if (!value.isObject() || value.toObject().isEmpty())
            return fail(tr("\"variants\": expected an object naming at least one variant, e.g. {\"full\": {}}"));
        const QJsonObject variants = value.toObject();
        for (auto it = variants.begin(); it != variants.end(); ++it) {
            const QString path = QStringLiteral("variants.%1").arg(it.key());
            if (!it.value().isObject()) return fail(tr("%1: expected an object with \"id\" and \"params\"").arg(path));
            const QJsonObject entry = it.value().toObject();
            if (!checkKeys(entry, path, {QStringLiteral("id"), QStringLiteral("params")})) return false;
            RecipeVariant variant;
            variant.name = it.key();
            variant.id = it.key();
            if (entry.contains(QLatin1String("id")) && !readString(entry.value(QLatin1String("id")), path + QStringLiteral(".id"), &variant.id))
                return false;
            const engine::VariantInfo* info = nullptr;
            QStringList known;
            for (const auto& candidate : m_registry) {
                known << QString::fromStdString(candidate.id);
                if (QString::fromStdString(candidate.id) == variant.id) info = &candidate;
            }
            if (!info)
                return fail(tr("%1: unknown variant \"%2\" (registered: %3)").arg(path, variant.id, known.join(QStringLiteral(", "))));
            const QJsonValue params = entry.value(QLatin1String("params"));
            if (!params.isUndefined() && !params.isObject())
                return fail(tr("%1.params: expected an object of parameter values").arg(path));
            QString message;
            if (!paramsFromJson(*info, params.toObject(), path + QStringLiteral(".params"), &variant.params, &message))
                return fail(message);
            recipe.variants.push_back(std::move(variant));
        }
        return true;
    }

    bool readInputs(const QJsonObject& root, Recipe& recipe) {
        const QJsonValue value = root.value(QLatin1String("inputs"));
        if (!value.isObject() || value.toObject().isEmpty())
            return fail(tr("\"inputs\": expected an object naming at least one input, e.g. {\"sample\": {\"textFile\": \"../sample.txt\"}}"));
        const QJsonObject inputs = value.toObject();
        for (auto it = inputs.begin(); it != inputs.end(); ++it) {
            const QString path = QStringLiteral("inputs.%1").arg(it.key());
            if (!it.value().isObject()) return fail(tr("%1: expected an object with \"text\" or \"textFile\"").arg(path));
            const QJsonObject entry = it.value().toObject();
            if (!checkKeys(entry, path, {QStringLiteral("text"), QStringLiteral("textFile")})) return false;
            const bool hasText = entry.contains(QLatin1String("text"));
            if (hasText == entry.contains(QLatin1String("textFile")))
                return fail(tr("%1: give exactly one of \"text\" and \"textFile\"").arg(path));
            RecipeInput input;
            input.name = it.key();
            if (hasText) {
                if (!readString(entry.value(QLatin1String("text")), path + QStringLiteral(".text"), &input.text)) return false;
            } else {
                if (!readString(entry.value(QLatin1String("textFile")), path + QStringLiteral(".textFile"), &input.source))
                    return false;
                if (!readTextFile(input, path)) return false;
            }
            recipe.inputs.push_back(std::move(input));
        }
        return true;
    }

    bool readTextFile(RecipeInput& input, const QString& path) {
        const QString file = QDir(m_baseDir).filePath(input.source);  // absolute paths stay absolute
        QFile f(file);
        if (!QFileInfo(file).isFile() || !f.open(QIODevice::ReadOnly))
            return fail(tr("%1.textFile: cannot read %2: %3")
                            .arg(path, QDir::toNativeSeparators(file),
                                 QFileInfo(file).exists() ? f.errorString() : tr("no such file")),
                        RecipeError::Kind::Input);
        QStringDecoder decoder(QStringDecoder::Utf8);
        input.text = decoder.decode(f.readAll());
        if (decoder.hasError())
            return fail(tr("%1.textFile: %2 is not valid UTF-8 text").arg(path, QDir::toNativeSeparators(file)),
                        RecipeError::Kind::Input);
        return true;
    }

    int findVariant(const Recipe& recipe, const QString& name) const {
        for (std::size_t i = 0; i < recipe.variants.size(); ++i)
            if (recipe.variants[i].name == name) return static_cast<int>(i);
        return -1;
    }

    bool readFigures(const QJsonObject& root, Recipe& recipe) {
        QJsonObject defaults;
        if (root.contains(QLatin1String("defaults"))) {
            if (!root.value(QLatin1String("defaults")).isObject()) return fail(tr("\"defaults\": expected an object"));
            defaults = root.value(QLatin1String("defaults")).toObject();
            QStringList allowed = figureKeys();
            allowed.removeAll(QStringLiteral("file"));
            if (!checkKeys(defaults, QStringLiteral("defaults"), allowed)) return false;
        }
        const QJsonValue value = root.value(QLatin1String("figures"));
        if (!value.isArray() || value.toArray().isEmpty()) return fail(tr("\"figures\": expected a non-empty array"));
        const QJsonArray figures = value.toArray();
        QSet<QString> written{QString::fromLatin1(Recipe::kManifestName)};
        for (qsizetype i = 0; i < figures.size(); ++i) {
            const QString path = QStringLiteral("figures[%1]").arg(i);
            if (!figures[i].isObject()) return fail(tr("%1: expected an object").arg(path));
            const QJsonObject own = figures[i].toObject();
            if (!checkKeys(own, path, figureKeys())) return false;
            std::vector<QJsonObject> expanded;
            if (!expandEachVariant(recipe, own, defaults, path, expanded)) return false;
            for (const QJsonObject& one : expanded) {
                RecipeFigure figure;
                if (!readFigure(recipe, one, defaults, path, figure)) return false;
                for (const QString& file : figure.outputFiles()) {
                    if (written.contains(file))
                        return fail(file == QLatin1String(Recipe::kManifestName)
                                        ? tr("%1.file: \"%2\" is reserved for the manifest").arg(path, file)
                                        : tr("%1.file: %2 is written by an earlier figure too").arg(path, file));
                    written.insert(file);
                }
                recipe.figures.push_back(std::move(figure));
            }
        }
        return true;
    }

    // "variant": "*" draws the figure once per registered variant, in the registry's order: the
    // recipe's variant of that name when it has one, else the variant with its defaults. The file
    // name says where the id goes ("mask-{variant}").
    bool expandEachVariant(Recipe& recipe, const QJsonObject& own, const QJsonObject& defaults, const QString& path,
                           std::vector<QJsonObject>& out) {
        const QJsonValue variant = own.contains(QLatin1String("variant")) ? own.value(QLatin1String("variant"))
                                                                          : defaults.value(QLatin1String("variant"));
        if (variant.toString() != QLatin1String("*")) {
            out.push_back(own);
            return true;
        }
        const QString file = own.value(QLatin1String("file")).toString();
        if (!file.contains(QLatin1String("{variant}")))
            return fail(tr("%1.file: \"variant\": \"*\" draws one figure per variant; put {variant} in the file name")
                            .arg(path));
        for (const engine::VariantInfo& info : m_registry) {
            const QString id = QString::fromStdString(info.id);
            if (findVariant(recipe, id) < 0) recipe.variants.push_back(RecipeVariant{id, id, {}});
            QJsonObject one = own;
            one.insert(QStringLiteral("variant"), id);
            one.insert(QStringLiteral("file"), QString(file).replace(QLatin1String("{variant}"), id));
            out.push_back(one);
        }
        return true;
    }

    bool readFigure(const Recipe& recipe, const QJsonObject& own, const QJsonObject& defaults, const QString& path,
                    RecipeFigure& figure) {
        // A figure's own key wins over "defaults"; messages name where the value came from.
        const auto has = [&](const char* key) { return own.contains(QLatin1String(key)) || defaults.contains(QLatin1String(key)); };
        const auto get = [&](const char* key) {
            return own.contains(QLatin1String(key)) ? own.value(QLatin1String(key)) : defaults.value(QLatin1String(key));
        };
        const auto where = [&](const char* key) {
            return (own.contains(QLatin1String(key)) ? path : QStringLiteral("defaults")) + QLatin1Char('.') + QLatin1String(key);
        };

        if (!own.contains(QLatin1String("file"))) return fail(tr("%1: missing \"file\" (the output name without suffix)").arg(path));
        if (!readString(own.value(QLatin1String("file")), path + QStringLiteral(".file"), &figure.file)) return false;
        if (figure.file.contains(QLatin1Char('/')) || figure.file.contains(QLatin1Char('\\')) ||
            figure.file.contains(QChar(0)) || figure.file.startsWith(QLatin1Char('.')) || figure.file.size() > kMaxFileNameLength)
            return fail(tr("%1.file: \"%2\" must be a plain file name (no folders, not starting with a dot, at most %3 characters)")
                            .arg(path, figure.file)
                            .arg(kMaxFileNameLength));

        figure.view = QStringLiteral("heatmap");
        if (has("view") && !readChoice(get("view"), where("view"), Recipe::viewNames(), &figure.view)) return false;

        const bool sweep = figure.view == QLatin1String("sweep");
        if (sweep) {
            if (!has("sweep"))
                return fail(tr("%1: the sweep view needs \"sweep\": the CSV written by attnscope-cli sweep").arg(path));
            if (!readSweep(get("sweep"), where("sweep"), figure)) return false;
        } else if (own.contains(QLatin1String("sweep"))) {
            return fail(tr("%1: \"sweep\" is only read by the sweep view").arg(path));
        }

        if (sweep) {
            // (draws the table it read: no input, variant or head)
        } else if (has("input")) {
            QString name;
            if (!readString(get("input"), where("input"), &name)) return false;
            figure.input = -1;
            for (std::size_t k = 0; k < recipe.inputs.size(); ++k)
                if (recipe.inputs[k].name == name) figure.input = static_cast<int>(k);
            if (figure.input < 0) return fail(tr("%1: no input named \"%2\" in \"inputs\"").arg(where("input"), name));
        } else if (recipe.inputs.size() > 1) {
            return fail(tr("%1: missing \"input\" (the recipe has %2 inputs)").arg(path).arg(recipe.inputs.size()));
        }

        if (sweep) {
        } else if (has("variant")) {
            QString name;
            if (!readString(get("variant"), where("variant"), &name)) return false;
            figure.variant = findVariant(recipe, name);
            if (figure.variant < 0) return fail(tr("%1: no variant named \"%2\" in \"variants\"").arg(where("variant"), name));
        } else if (recipe.variants.size() > 1) {
            return fail(tr("%1: missing \"variant\" (the recipe names %2 variants)").arg(path).arg(recipe.variants.size()));
        }
        if (figure.view == QLatin1String("compare")) {
            if (!has("compareWith"))
                return fail(tr("%1: the compare view needs \"compareWith\" (a variant name, or an array of 1 to %2)")
                                .arg(path)
                                .arg(kMaxCompared));
            const QJsonValue with = get("compareWith");
            const QJsonArray names = with.isArray() ? with.toArray() : QJsonArray{with};
            if (names.isEmpty() || names.size() > kMaxCompared)
                return fail(tr("%1: expected a variant name or an array of 1 to %2 names").arg(where("compareWith")).arg(kMaxCompared));
            for (const QJsonValue& entry : names) {
                QString name;
                if (!readString(entry, where("compareWith"), &name)) return false;
                const int index = findVariant(recipe, name);
                if (index < 0) return fail(tr("%1: no variant named \"%2\" in \"variants\"").arg(where("compareWith"), name));
                figure.compareWith.push_back(index);
            }
        } else if (own.contains(QLatin1String("compareWith"))) {
            return fail(tr("%1: \"compareWith\" is only read by the compare view").arg(path));
        }

        if (has("head") && !readInt(get("head"), where("head"), 0, recipe.projection.heads - 1, &figure.head)) return false;
        int width = figure.size.width(), height = figure.size.height();
        if (has("width") && !readInt(get("width"), where("width"), kMinSide, kMaxSide, &width)) return false;
        if (has("height") && !readInt(get("height"), where("height"), kMinSide, kMaxSide, &height)) return false;
        figure.size = QSize(width, height);
        if (has("dpi") && !readInt(get("dpi"), where("dpi"), kMinDpi, kMaxDpi, &figure.dpi)) return false;
        if (has("formats")) {
            const QJsonValue formats = get("formats");
            if (!formats.isArray() || formats.toArray().isEmpty())
                return fail(tr("%1: expected a non-empty array of \"png\", \"svg\", \"pdf\"").arg(where("formats")));
            figure.formats.clear();
            for (const QJsonValue& entry : formats.toArray()) {
                QString name;
                if (!readChoice(entry, where("formats"), {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}, &name))
                    return false;
                const FigureFormat format = name == QLatin1String("svg")   ? FigureFormat::Svg
                                            : name == QLatin1String("pdf") ? FigureFormat::Pdf
                                                                           : FigureFormat::Png;
                if (std::find(figure.formats.begin(), figure.formats.end(), format) != figure.formats.end())
                    return fail(tr("%1: \"%2\" is listed twice").arg(where("formats"), name));
                figure.formats.push_back(format);
            }
        }
        if (has("sidecar") && !readBool(get("sidecar"), where("sidecar"), &figure.sidecar)) return false;
        if (has("slide") && !readBool(get("slide"), where("slide"), &figure.slide)) return false;
        if (has("colormap") &&
            !readChoice(get("colormap"), where("colormap"),
                        {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("cividis"), QStringLiteral("rdbu")},
                        &figure.heatmap.colormap))
            return false;
        QString choice;
        if (has("scale")) {
            if (!readChoice(get("scale"), where("scale"), {QStringLiteral("linear"), QStringLiteral("log")}, &choice)) return false;
            figure.heatmap.scale = views::colorScaleFromName(choice);
        }
        if (has("pooling")) {
            if (!readChoice(get("pooling"), where("pooling"), {QStringLiteral("max"), QStringLiteral("mean")}, &choice)) return false;
            figure.heatmap.pooling = views::poolModeFromName(choice);
        }
        if (has("maskWeights") && !readBool(get("maskWeights"), where("maskWeights"), &figure.maskWeights)) return false;
        return true;
    }

    QString m_baseDir;
    QString m_name;
    const std::vector<engine::VariantInfo>& m_registry;
    RecipeError m_error;
};

}  // namespace

QStringList RecipeFigure::outputFiles() const {
    QStringList files;
    for (FigureFormat format : formats) files << file + QLatin1Char('.') + figureFormatName(format);
    if (sidecar) files << file + QStringLiteral(".json");
    return files;
}

QStringList Recipe::outputFiles() const {
    QStringList files;
    for (const RecipeFigure& figure : figures) files += figure.outputFiles();
    return files;
}

QStringList Recipe::viewNames() {
    return {QStringLiteral("heatmap"), QStringLiteral("mask"),        QStringLiteral("compare"),
            QStringLiteral("links"),   QStringLiteral("diagnostics"), QStringLiteral("heads"), QStringLiteral("sweep")};
}

std::optional<Recipe> RecipeParser::load(const QString& path, const std::vector<engine::VariantInfo>& registry,
                                         RecipeError* error) {
    QFile file(path);
    if (!QFileInfo(path).isFile() || !file.open(QIODevice::ReadOnly)) {
        error->kind = RecipeError::Kind::Input;
        error->message = tr("cannot read the recipe %1: %2")
                             .arg(QDir::toNativeSeparators(path), QFileInfo::exists(path) ? file.errorString() : tr("no such file"));
        return std::nullopt;
    }
    return parse(file.readAll(), QFileInfo(path).absolutePath(), QDir::toNativeSeparators(path), registry, error);
}

std::optional<Recipe> RecipeParser::parse(const QByteArray& json, const QString& baseDir, const QString& displayName,
                                          const std::vector<engine::VariantInfo>& registry, RecipeError* error) {
    return Reader(baseDir, displayName, registry).read(json, error);
}

}  // namespace attnscope::app
