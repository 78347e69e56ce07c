#include "sentencepiece_shim.h"

#include <sentencepiece_processor.h>

#include <string>
#include <vector>

namespace {
const sentencepiece::SentencePieceProcessor& processorOf(const void* p) {
    return *static_cast<const sentencepiece::SentencePieceProcessor*>(p);
}
void send(AttnscopeSpmText out, void* user, const std::string& text) { out(user, text.data(), text.size()); }
}  // namespace

extern "C" {

void* attnscope_spm_load(const char* path, AttnscopeSpmText error, void* user) {
    auto* processor = new sentencepiece::SentencePieceProcessor();
    const auto status = processor->Load(path);
    if (status.ok()) return processor;
    send(error, user, status.ToString());
    delete processor;
    return nullptr;
}

void attnscope_spm_free(void* processor) { delete static_cast<sentencepiece::SentencePieceProcessor*>(processor); }

int attnscope_spm_piece_size(const void* processor) { return processorOf(processor).GetPieceSize(); }

int attnscope_spm_encode(const void* processor, const char* text, size_t size, AttnscopeSpmPiece piece, void* user,
                         AttnscopeSpmText error, void* errorUser) {
    sentencepiece::ImmutableSentencePieceText result;
    const auto status = processorOf(processor).Encode(std::string(text, size), result.mutable_proto());
    if (!status.ok()) {
        send(error, errorUser, status.ToString());
        return -1;
    }
    for (const auto& p : result.pieces()) piece(user, static_cast<int>(p.id()), p.piece().data(), p.piece().size(), p.begin(), p.end());
    return 0;
}

void attnscope_spm_id_to_piece(const void* processor, int id, AttnscopeSpmText out, void* user) {
    send(out, user, processorOf(processor).IdToPiece(id));
}

int attnscope_spm_piece_to_id(const void* processor, const char* piece, size_t size) {
    const std::string wanted(piece, size);
    const int id = processorOf(processor).PieceToId(wanted);
    return processorOf(processor).IdToPiece(id) == wanted ? id : -1;  // PieceToId answers unk for unknown pieces
}

int attnscope_spm_is_control(const void* processor, int id) { return processorOf(processor).IsControl(id) ? 1 : 0; }

void attnscope_spm_decode(const void* processor, const int* ids, size_t count, AttnscopeSpmText out, void* user) {
    send(out, user, processorOf(processor).DecodeIds(std::vector<int>(ids, ids + count)));
}
}
