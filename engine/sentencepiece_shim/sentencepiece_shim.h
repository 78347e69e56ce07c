#pragma once
// The C interface of libattnscope_sentencepiece, a small library around Debian's libsentencepiece.
// That library carries its own copy of protobuf-lite and exports it, which clashes with the
// protobuf LibTorch loads (a crash before main). So no AttnScope binary links it: the engine
// opens this shim with dlopen(RTLD_LOCAL | RTLD_DEEPBIND), keeping both copies apart.
// Strings cross the boundary through callbacks, so neither side frees the other's memory.

#include <stddef.h>

extern "C" {

typedef void (*AttnscopeSpmText)(void* user, const char* text, size_t size);
typedef void (*AttnscopeSpmPiece)(void* user, int id, const char* piece, size_t size, unsigned begin, unsigned end);

/// A processor for the model file at `path`, or null with the library's message through `error`.
void* attnscope_spm_load(const char* path, AttnscopeSpmText error, void* user);
void attnscope_spm_free(void* processor);
int attnscope_spm_piece_size(const void* processor);
/// Each piece of the (valid UTF-8) text with its byte span; 0, or -1 with the message.
int attnscope_spm_encode(const void* processor, const char* text, size_t size, AttnscopeSpmPiece piece, void* user,
                         AttnscopeSpmText error, void* errorUser);
void attnscope_spm_id_to_piece(const void* processor, int id, AttnscopeSpmText out, void* user);
/// The id of `piece`, or -1 when the model has no such piece.
int attnscope_spm_piece_to_id(const void* processor, const char* piece, size_t size);
int attnscope_spm_is_control(const void* processor, int id);
void attnscope_spm_decode(const void* processor, const int* ids, size_t count, AttnscopeSpmText out, void* user);
}
