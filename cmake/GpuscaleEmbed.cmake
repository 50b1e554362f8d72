# gpuscale_embed_text(OUTPUT_VAR INPUT SYMBOL): generates a .cpp defining gpuscale::SYMBOL as the text
# of INPUT (see embed_text.cmake) and sets OUTPUT_VAR to its path, for add_library's sources.
set(GPUSCALE_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_text.cmake)
function(gpuscale_embed_text out_var input symbol)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${symbol}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${out} -DSYMBOL=${symbol} -P ${GPUSCALE_EMBED_SCRIPT}
    DEPENDS ${input} ${GPUSCALE_EMBED_SCRIPT}
    COMMENT "Embedding ${input}")
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
