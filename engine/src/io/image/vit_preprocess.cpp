#include "io/image/vit_preprocess.h"

#include "base/api/config_fields.h"
#include "base/api/strict_json.h"

#include <cmath>
#include <filesystem>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;
using config_fields::FieldReader;

std::string size(std::int64_t width, std::int64_t height) { return std::to_string(width) + " × " + std::to_string(height); }

Error bad(const std::string& source, const std::string& key, const std::string& rule) {
    return Error{ErrorCode::InvalidInput, source + ": field '" + key + "' " + rule};
}

Result<std::int64_t> side(const Json& v, const std::string& source, const std::string& key) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 16384)
        return bad(source, key, "must be a whole number in [1, 16384], got " + v.dump());
    return v.get<std::int64_t>();
}

// "size" / "crop_size": an integer (a square), {"height", "width"}, or (size only) {"shortest_edge"}.
Result<void> readSize(const Json& root, const std::string& source, const char* key, std::int64_t& height, std::int64_t& width,
                      std::int64_t* shortestEdge) {
    const auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    if (it->is_number()) {
        auto s = side(*it, source, key);
        if (!s) return s.error();
        height = width = s.value();
        return {};
    }
    if (it->is_object() && it->contains("height") && it->contains("width")) {
        auto h = side(it->at("height"), source, std::string(key) + ".height");
        if (!h) return h.error();
        auto w = side(it->at("width"), source, std::string(key) + ".width");
        if (!w) return w.error();
        height = h.value();
        width = w.value();
        return {};
    }
    if (shortestEdge && it->is_object() && it->contains("shortest_edge")) {
        auto s = side(it->at("shortest_edge"), source, std::string(key) + ".shortest_edge");
        if (!s) return s.error();
        *shortestEdge = s.value();
        return {};
    }
    return bad(source, key, std::string("must be an integer or {\"height\", \"width\"}") +
                                (shortestEdge ? " or {\"shortest_edge\"}" : "") + ", got " + it->dump());
}

Result<void> readTriple(const Json& root, const std::string& source, const char* key, std::array<double, 3>& out, bool positive) {
    const auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    const auto check = [&](const Json& v) { return v.is_number() && std::isfinite(v.get<double>()) && (!positive || v.get<double>() > 0); };
    if (check(*it)) {
        out.fill(it->get<double>());
        return {};
    }
    if (!it->is_array() || it->size() != 3 || !check((*it)[0]) || !check((*it)[1]) || !check((*it)[2]))
        return bad(source, key, std::string("must be three ") + (positive ? "positive " : "") + "numbers (R, G, B), got " + it->dump());
    for (int c = 0; c < 3; ++c) out[static_cast<std::size_t>(c)] = (*it)[static_cast<std::size_t>(c)].get<double>();
    return {};
}

// Hugging Face's get_resize_output_image_size with default_to_square = False.
void shortestEdgeSize(std::int64_t edge, std::int64_t h, std::int64_t w, std::int64_t& outH, std::int64_t& outW) {
    if (h <= w) {
        outH = edge;
        outW = static_cast<std::int64_t>(static_cast<double>(edge) * static_cast<double>(w) / static_cast<double>(h));
    } else {
        outW = edge;
        outH = static_cast<std::int64_t>(static_cast<double>(edge) * static_cast<double>(h) / static_cast<double>(w));
    }
}

}  // namespace

ImagePreprocessor defaultVitPreprocessor(std::int64_t imageSize) {
    ImagePreprocessor pre;
    pre.height = pre.width = imageSize;
    return pre;
}

Result<ImagePreprocessor> parsePreprocessorConfig(const std::string& jsonText, const std::string& source) {
    auto parsed = parseStrictJson(jsonText, source);
    if (!parsed) return parsed.error();
    const Json& root = parsed.value();
    if (!root.is_object()) return Error{ErrorCode::InvalidInput, source + ": must be a JSON object"};
    const FieldReader f(root, source);
    ImagePreprocessor pre;
    pre.fromFile = true;
    ATTNSCOPE_TRY_ASSIGN(pre.doResize, f.flag("do_resize", true));
    ATTNSCOPE_TRY_ASSIGN(pre.doCenterCrop, f.flag("do_center_crop", false));
    ATTNSCOPE_TRY_ASSIGN(pre.doRescale, f.flag("do_rescale", true));
    ATTNSCOPE_TRY_ASSIGN(pre.doNormalize, f.flag("do_normalize", true));
    ATTNSCOPE_TRY_ASSIGN(pre.rescaleFactor, f.number("rescale_factor", 1.0 / 255.0, 1e-12, 1e6));
    std::int64_t resample = 2;
    ATTNSCOPE_TRY_ASSIGN(resample, f.integer("resample", 2, 0, 5));
    pre.resample = static_cast<PilFilter>(resample);
    if (auto s = readSize(root, source, "size", pre.height, pre.width, &pre.shortestEdge); !s) return s.error();
    if (auto s = readSize(root, source, "crop_size", pre.cropHeight, pre.cropWidth, nullptr); !s) return s.error();
    if (auto s = readTriple(root, source, "image_mean", pre.mean, false); !s) return s.error();
    if (auto s = readTriple(root, source, "image_std", pre.std, true); !s) return s.error();
    return pre;
}

Result<ImagePreprocessor> loadVitPreprocessor(const std::string& folder, std::int64_t imageSize, std::vector<std::string>& warnings) {
    const std::string path = folder + "/preprocessor_config.json";
    if (!std::filesystem::exists(path)) {
        warnings.push_back("no preprocessor_config.json: pictures are resized to " + size(imageSize, imageSize) +
                           " (bilinear) and normalised with mean 0.5 and std 0.5, ViTImageProcessor's defaults");
        return defaultVitPreprocessor(imageSize);
    }
    auto text = readWholeFile(path, 1u << 20);
    if (!text) return text.error();
    return parsePreprocessorConfig(text.value(), path);
}

Result<VitPicture> prepareVitPicture(const RgbImage& source, const std::string& name, const ImagePreprocessor& pre,
                                     const VitSettings& vit) {
    if (source.width <= 0 || source.height <= 0)
        return makeError(ErrorCode::InvalidInput, "the image is empty (" + size(source.width, source.height) + " pixels)");
    const std::int64_t model = vit.imageSize;
    std::vector<std::string> notes;
    RgbImage picture = source;
    double scaleX = 1, scaleY = 1;
    std::int64_t left = 0, top = 0;
    const bool asIs = source.width == model && source.height == model;
    if (!asIs && pre.doResize) {
        std::int64_t h = pre.height, w = pre.width;
        if (pre.shortestEdge > 0) shortestEdgeSize(pre.shortestEdge, source.height, source.width, h, w);
        if (h != source.height || w != source.width) {
            picture = resizePil(source, h, w, pre.resample);
            notes.push_back("resized from " + size(source.width, source.height) + " to " + size(w, h) + " (" +
                            pilFilterName(pre.resample) + (pre.fromFile ? ", as preprocessor_config.json says)" : ", ViT's default)"));
            scaleX = static_cast<double>(source.width) / static_cast<double>(w);
            scaleY = static_cast<double>(source.height) / static_cast<double>(h);
        }
    }
    if (!asIs && pre.doCenterCrop && (pre.cropHeight != picture.height || pre.cropWidth != picture.width)) {
        if (pre.cropHeight > picture.height || pre.cropWidth > picture.width)
            return makeError(ErrorCode::InvalidInput, "the preprocessor crops " + size(pre.cropWidth, pre.cropHeight) + " from a " +
                                                          size(picture.width, picture.height) + " picture: crop_size is larger");
        top = (picture.height - pre.cropHeight) / 2;
        left = (picture.width - pre.cropWidth) / 2;
        RgbImage cropped;
        cropped.height = pre.cropHeight;
        cropped.width = pre.cropWidth;
        cropped.rgb.resize(static_cast<std::size_t>(3 * cropped.height * cropped.width));
        for (int c = 0; c < 3; ++c)
            for (std::int64_t y = 0; y < cropped.height; ++y)
                for (std::int64_t x = 0; x < cropped.width; ++x)
                    cropped.rgb[static_cast<std::size_t>((c * cropped.height + y) * cropped.width + x)] = picture.at(c, y + top, x + left);
        notes.push_back("centre crop " + size(cropped.width, cropped.height) + " of " + size(picture.width, picture.height));
        picture = std::move(cropped);
    }
    if (picture.width != model || picture.height != model)
        return makeError(ErrorCode::InvalidInput,
                         "the picture is " + size(picture.width, picture.height) + " after the preprocessor's steps, but the model reads " +
                             size(model, model) + " (config.json image_size): check preprocessor_config.json's size and crop_size");
    VitPicture out;
    out.size = model;
    out.pixels.resize(picture.rgb.size());
    const std::size_t plane = static_cast<std::size_t>(model * model);
    for (std::size_t i = 0; i < picture.rgb.size(); ++i) {
        const std::size_t c = i / plane;
        // Bytes k back from k/255, then as the processor: rescale, then (x − mean) / std.
        double v = std::round(static_cast<double>(picture.rgb[i]) * 255.0);
        if (pre.doRescale) v *= pre.rescaleFactor;
        if (pre.doNormalize) v = (v - pre.mean[c]) / pre.std[c];
        out.pixels[i] = static_cast<float>(v);
    }
    ImageGrid& grid = out.grid;
    grid.mode = ImageTokenMode::Patches;
    grid.name = name;
    grid.sourceHeight = source.height;
    grid.sourceWidth = source.width;
    grid.rows = grid.cols = vit.gridSide();
    grid.prefix = vit.prefixTokens();
    grid.cell = vit.patchSize;
    grid.inputHeight = grid.inputWidth = model;
    grid.offsetX = static_cast<double>(left);
    grid.offsetY = static_cast<double>(top);
    grid.scaleX = scaleX;
    grid.scaleY = scaleY;
    if (asIs) notes.push_back("used as it is: the picture is the model's " + size(model, model));
    grid.notes = std::move(notes);
    return out;
}

}  // namespace attnscope::engine
