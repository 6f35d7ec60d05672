# embed.cmake — turn a text file into a C header holding it as a NUL-terminated array:
#   cmake -DIN=file.py -DOUT=file_py.h -DNAME=af_file_py -P embed.cmake
# Used for the Python files the tools carry inside them (harness/python/aotif_fill.py,
# aotif_ref.py): one source for both the Python process and the C that writes or runs it.
#   -DFILL_CONSTANTS=case.h  also: the line "MOD, A, B, C = ..." of the file gets its numbers
#                            from AF_FILL_MOD/_A/_B/_C there, the C fill's one definition
#                            (a file without that line is an error)
if(FILL_CONSTANTS)
  file(READ "${FILL_CONSTANTS}" hdr)
  set(vals)
  foreach(k MOD A B C)
    if(NOT hdr MATCHES "#define AF_FILL_${k} ([0-9]+)")
      message(FATAL_ERROR "embed.cmake: AF_FILL_${k} not found in ${FILL_CONSTANTS}")
    endif()
    list(APPEND vals "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN vals ", " vals)
  file(READ "${IN}" text)
  string(REGEX REPLACE "\nMOD, A, B, C = [0-9, ]+\n" "\nMOD, A, B, C = ${vals}\n" out "${text}")
  if(NOT out MATCHES "\nMOD, A, B, C = ${vals}\n")
    message(FATAL_ERROR "embed.cmake: no line 'MOD, A, B, C = ...' in ${IN}")
  endif()
  file(WRITE "${OUT}.py.tmp" "${out}")
  set(IN "${OUT}.py.tmp")
endif()
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," arr "${hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by embed.cmake: do not edit */\nstatic const char ${NAME}[] = {${arr} 0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
if(FILL_CONSTANTS)
  file(REMOVE "${OUT}.py.tmp")
endif()
