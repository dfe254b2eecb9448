# Writes a C++ source holding the web UI's bytes (cmake -P): the built page when there is one, else the placeholder.
#   -DBUNDLE=web/dist/index.html.gz -DPLACEHOLDER=page.html -DOUTPUT=file.cpp
if(EXISTS "${BUNDLE}")
  set(INPUT "${BUNDLE}")
  set(GZIP ON)
  set(BUILT ON)
else()
  message(STATUS "web/dist/index.html.gz is missing: embedding a placeholder page (scripts/setup builds the UI)")
  set(INPUT "${PLACEHOLDER}")
  set(GZIP OFF)
  set(BUILT OFF)
endif()
file(READ "${INPUT}" hex HEX)
file(SHA256 "${INPUT}" sha)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(SUBSTRING "${sha}" 0 16 etag)
if(GZIP)
  set(gzip true)
else()
  set(gzip false)
endif()
if(BUILT)
  set(built true)
else()
  set(built false)
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/embed_file.cmake. Do not edit.
#include <cstddef>
namespace switchboard::webapi::embedded {
extern const unsigned char ui_page[] = {
${bytes}0x00};
extern const std::size_t ui_page_size = ${size};
extern const bool ui_page_gzip = ${gzip};
extern const bool ui_page_built = ${built};
extern const char ui_page_etag[] = \"${etag}\";
}  // namespace switchboard::webapi::embedded
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
