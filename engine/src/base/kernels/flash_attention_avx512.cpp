// The flash-attention body for AVX-512F: 32 registers of 16 floats (CMakeLists.txt gives this file its flags).

#define FLASH_ENTRY headAvx512
#define FLASH_LANES 16
#define FLASH_SCORE_ROWS 8
#define FLASH_VALUE_ROWS 6
#define FLASH_VALUE_VECS 4
#include "base/kernels/flash_attention_body.inc"
