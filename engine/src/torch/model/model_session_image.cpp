// A vision model's pass: the user's picture prepared by the model's own preprocessor, its patches
// (after [CLS] and DeiT's distillation token) placed back on the picture for the views.

#include "torch/model/model_session.h"

#include "torch/tensors/to_plain.h"
#include "io/image/image_tokens.h"

#include <cstring>

namespace attnscope::engine {
namespace {

// What identifies a picture for the pass cache: its name, size and a hash of its values.
std::string pictureKey(const ImageSpec& spec) {
    std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the float bytes
    const auto* bytes = reinterpret_cast<const unsigned char*>(spec.image.rgb.data());
    for (std::size_t i = 0; i < spec.image.rgb.size() * sizeof(float); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    return "\x01image " + spec.name + " " + std::to_string(spec.image.width) + "x" + std::to_string(spec.image.height) + " " +
           std::to_string(hash);
}

}  // namespace

const ModelSession::Pass& ModelSession::runImage(const ModelInput& input, const ProgressFn& progress) {
    if (!m_preprocessor)
        throw EngineError(ErrorCode::InvalidArgument, m_info.folder + " is a " + m_info.arch +
                                                          " model: it reads text, not pictures (open a ViT or DeiT folder for images)");
    if (!input.image)
        throw EngineError(ErrorCode::InvalidArgument, m_info.folder + " is a " + m_info.arch +
                                                          " model: it reads pictures, not text (open an image: File ▸ Open Image, --image PATH)");
    const std::string key = pictureKey(*input.image);
    if (m_last && m_last->text == key && (m_last->keepAttention || !input.keepAttention)) return *m_last;

    const ModelConfig& c = m_model->config();
    auto picture = prepareVitPicture(input.image->image, input.image->name, *m_preprocessor, c.vit);
    if (!picture) throw EngineError(picture.error().code, picture.error().message);
    auto pass = std::make_unique<Pass>();
    pass->text = key;
    pass->keepAttention = input.keepAttention;
    std::vector<std::string> prefixNames;
    if (c.vit.clsToken) prefixNames.push_back("[CLS]");
    if (c.vit.distillationToken) prefixNames.push_back("[DIST]");
    pass->tokens = gridTokenList(picture.value().grid, prefixNames);
    for (const std::string& note : pass->tokens.image->notes) pass->notices.push_back("image: " + note);
    pass->special.assign(pass->tokens.tokens.size(), false);
    for (std::size_t t = 0; t < prefixNames.size(); ++t) pass->special[t] = true;
    for (const Token& t : pass->tokens.tokens) pass->ids.push_back(t.id);
    checkPassBudget(static_cast<std::int64_t>(pass->ids.size()), input.keepAttention);
    pass->capture = m_model->forwardImage(picture.value().pixels, picture.value().size, input.keepAttention, progress, pass->notices);
    m_last = std::move(pass);
    return *m_last;
}

std::vector<PlainTensor> ModelSession::lastPassAttention() const {
    std::vector<PlainTensor> out;
    if (!m_last) return out;
    for (const auto& a : m_last->capture.attention) out.push_back(toPlain(a));
    return out;
}

}  // namespace attnscope::engine
