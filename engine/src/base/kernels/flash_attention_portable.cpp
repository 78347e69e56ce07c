// The flash-attention body for SSE2 (x86-64's baseline): 16 registers of 4 floats (CMakeLists.txt gives this file its flags).

#define FLASH_ENTRY headPortable
#define FLASH_LANES 4
#define FLASH_SCORE_ROWS 1
#define FLASH_VALUE_ROWS 2
#define FLASH_VALUE_VECS 4
#include "base/kernels/flash_attention_body.inc"
