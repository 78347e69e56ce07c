# The engine's folders stand on floors (ENGINE_FLOORS below, lowest first): a file includes only its
# own folder and folders on lower floors, so no two folders include each other. A folder is a
# library's topic (engine/src/<library>/<topic>/); the libraries' own order, base < io < attention
# < torch, is the floors' (engine/CMakeLists.txt). The upward includes that remain are listed in
# engine_floor_exceptions.txt, to be removed: this check fails on an upward include that is not
# listed, on a listed one that is gone (take it off the list), on a folder that has no floor (give
# it one), and on a source outside the four libraries.
set(ENGINE_FLOORS
  base/api base/runtime base/kernels
  io/families io/image io/checkpoint io/tokenize io/context
  attention/pattern attention/weights attention/catalog attention/variants attention/moe attention/run
  torch/tensors torch/projections torch/model torch/forwards torch/atlas torch/train torch)
set(ENGINE_LIBRARIES base io attention torch)

set(root "${SOURCE_DIR}/engine/src")
set(problems "")
file(GLOB entries RELATIVE "${root}" "${root}/*")
foreach(entry ${entries})
  list(FIND ENGINE_LIBRARIES "${entry}" known)
  if(NOT IS_DIRECTORY "${root}/${entry}" OR known EQUAL -1)
    list(APPEND problems "engine/src/${entry} is not one of the engine's libraries (${ENGINE_LIBRARIES})")
  endif()
endforeach()
foreach(library ${ENGINE_LIBRARIES})
  file(GLOB topics RELATIVE "${root}" "${root}/${library}/*")
  foreach(topic ${topics})
    list(FIND ENGINE_FLOORS "${topic}" floor)
    if(IS_DIRECTORY "${root}/${topic}" AND floor EQUAL -1)
      list(APPEND problems "engine/src/${topic}/ has no floor: add it to ENGINE_FLOORS in ${CMAKE_CURRENT_LIST_FILE}")
    endif()
  endforeach()
endforeach()

# The folder a file or an include belongs to: "<library>/<topic>", or "<library>" for a file at the
# library's top.
function(engine_folder path out)
  if(path MATCHES "^([a-z_]+)/([a-z_0-9]+)/")
    set(${out} "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}" PARENT_SCOPE)
  elseif(path MATCHES "^([a-z_]+)/")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

file(GLOB_RECURSE files RELATIVE "${root}" "${root}/*.h" "${root}/*.cpp" "${root}/*.inc")
set(upward "")
foreach(f ${files})
  engine_folder("${f}" from)
  list(FIND ENGINE_FLOORS "${from}" fromFloor)
  file(STRINGS "${root}/${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_0-9]+/")
  foreach(line ${includes})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" target "${line}")
    engine_folder("${target}" to)
    list(FIND ENGINE_FLOORS "${to}" toFloor)
    if(toFloor GREATER fromFloor AND fromFloor GREATER -1)
      list(APPEND upward "${from} -> ${to}")
      set(why_${from}_${to} "${why_${from}_${to}}\n    ${f}: ${line}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES upward)

file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/engine_floor_exceptions.txt" listed REGEX "^[a-z_/]+ -> [a-z_/]+")
foreach(edge ${upward})
  list(FIND listed "${edge}" known)
  if(known EQUAL -1)
    string(REPLACE " -> " ";" pair "${edge}")
    list(GET pair 0 a)
    list(GET pair 1 b)
    list(APPEND problems "engine/src/${a}/ includes engine/src/${b}/, a higher floor:${why_${a}_${b}}")
  endif()
endforeach()
foreach(edge ${listed})
  list(FIND upward "${edge}" present)
  if(present EQUAL -1)
    list(APPEND problems "'${edge}' is listed in engine_floor_exceptions.txt but no longer happens: take it off the list")
  endif()
endforeach()

if(problems)
  string(REPLACE ";" "\n" problems "${problems}")
  message(FATAL_ERROR "engine floors:\n${problems}")
endif()
list(LENGTH listed remaining)
message(STATUS "engine floors: every include goes down a floor but the ${remaining} listed exceptions")
