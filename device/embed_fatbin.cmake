# SPDX-License-Identifier: MIT OR Apache-2.0
# cmake -DIN=<fatbin> -DOUT=<cpp> -DSYMBOL=<name> -P embed_fatbin.cmake: the fatbin's bytes as a C++ array.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by device/embed_fatbin.cmake.\n#include <cstddef>\n"
  "// cuModuleLoadData reads the fatbin in place: keep it aligned like a heap block.\n"
  "alignas(64) extern const unsigned char ${SYMBOL}[${size}] = {\n${bytes}};\n"
  "extern const std::size_t ${SYMBOL}_size = ${size};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
