# Turns a text file (a JSON Schema, the built-in peaks table) into a C++ source file defining
#   namespace gpuscale { extern const char* const SYMBOL; }
# so the binary works without the repository. Run as: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P embed_text.cmake
file(READ ${INPUT} content)
string(FIND "${content}" ")gpuscale_text\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )gpuscale_text\"")
endif()
file(WRITE ${OUTPUT} "// Generated from ${INPUT}: do not edit.\nnamespace gpuscale {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"gpuscale_text(${content})gpuscale_text\";\n}\n")
