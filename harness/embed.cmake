# embed.cmake — turn a text file into a C header holding it as a NUL-terminated array:
#   cmake -DIN=file.py -DOUT=file_py.h -DNAME=af_file_py -P embed.cmake
# Used for the Python files the tools carry inside them (harness/python/aotif_fill.py,
# aotif_ref.py): one source for both the Python process and the C that writes or runs it.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," arr "${hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by embed.cmake: do not edit */\nstatic const char ${NAME}[] = {${arr} 0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
