// The flash-attention body for AVX2 with FMA: 16 registers of 8 floats (CMakeLists.txt gives this file its flags).

#define FLASH_ENTRY headAvx2
#define FLASH_LANES 8
#define FLASH_SCORE_ROWS 2
#define FLASH_VALUE_ROWS 6
#define FLASH_VALUE_VECS 2
#include "base/kernels/flash_attention_body.inc"
