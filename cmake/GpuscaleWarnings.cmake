# Warning flags for host code: -Wall -Wextra everywhere, -Werror when GPUSCALE_WERROR is on (CI).
add_library(gpuscale_warnings INTERFACE)
target_compile_options(gpuscale_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${GPUSCALE_WERROR}>>:-Werror>)

if(GPUSCALE_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
  # GCC 12 reports -Wmaybe-uninitialized inside libstdc++ (std::function's storage, as <regex> and CLI11
  # use it) once the sanitizers instrument the code: a false positive of the instrumentation, not of our
  # code (the normal -Werror build keeps the warning on). Off for sanitizer builds only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(gpuscale_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endif()

# GCC 12 reports -Wrestrict inside libstdc++'s std::string operator+ at -O2/-O3, a known false
# positive (GCC bug 105329, fixed in GCC 13). Silence only that one, only on GCC 12.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(gpuscale_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
