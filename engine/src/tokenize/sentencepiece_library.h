#pragma once
// libattnscope_sentencepiece (engine/sentencepiece_shim/), opened on first use with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) so its protobuf never meets LibTorch's.

#include <attnscope/result.h>

#include "../../sentencepiece_shim/sentencepiece_shim.h"

namespace attnscope::engine {

struct SentencePieceLibrary {
    decltype(&attnscope_spm_load) load = nullptr;
    decltype(&attnscope_spm_free) free = nullptr;
    decltype(&attnscope_spm_piece_size) pieceSize = nullptr;
    decltype(&attnscope_spm_encode) encode = nullptr;
    decltype(&attnscope_spm_id_to_piece) idToPiece = nullptr;
    decltype(&attnscope_spm_piece_to_id) pieceToId = nullptr;
    decltype(&attnscope_spm_is_control) isControl = nullptr;
    decltype(&attnscope_spm_decode) decode = nullptr;
};

/// The library, opened once per process: next to the executable, else where the build put it.
/// Unsupported, naming the places tried, when neither opens.
Result<const SentencePieceLibrary*> sentencePieceLibrary();

}  // namespace attnscope::engine
