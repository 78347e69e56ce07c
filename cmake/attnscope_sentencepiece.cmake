# Debian's libsentencepiece (T5 and Switch Transformers tokenizers, spiece.model) has a pkg-config
# file but no CMake package. Only attnscope-sentencepiece links it (engine/sentencepiece_helper/:
# its bundled protobuf must stay out of every process that loads LibTorch).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED sentencepiece)
find_library(ATTNSCOPE_SENTENCEPIECE_LIB sentencepiece HINTS ${SENTENCEPIECE_LIBRARY_DIRS} REQUIRED)
if(NOT TARGET attnscope::sentencepiece)
  add_library(attnscope::sentencepiece UNKNOWN IMPORTED)
  set_target_properties(attnscope::sentencepiece PROPERTIES
    IMPORTED_LOCATION ${ATTNSCOPE_SENTENCEPIECE_LIB}
    INTERFACE_INCLUDE_DIRECTORIES "${SENTENCEPIECE_INCLUDE_DIRS}")
endif()
