# Shared helpers: warnings and test registration.

function(attnscope_set_warnings tgt)
  target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(ATTNSCOPE_WERROR)
    target_compile_options(${tgt} PRIVATE -Werror)
  endif()
  if(ATTNSCOPE_SANITIZE)
    target_compile_options(${tgt} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${tgt} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# attnscope_add_test(NAME name SOURCES ... LIBS ... LABELS ... [ENV ...])
# One executable per test file group; GoogleTest cases are registered with ctest individually
# only when cheap, otherwise as one test so the suite stays fast on 2 cores.
function(attnscope_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS})
  attnscope_set_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  # Passive OpenMP waiting: two spinning OpenMP threads next to OpenBLAS's threads slow blocked
  # attention 3-5x on a 2-core machine (docs/PERFORMANCE.md).
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}"
    ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;QT_QPA_PLATFORM=offscreen;${T_ENV}")
endfunction()
