# Writes a C++ source that holds the text of each schema file (FILES, in order) as a SchemaStep of
# relay/src/migrate/schema_steps.h, so the binary carries the one copy of the schema that
# schema/*.sql is. Run at build time (cmake -P) whenever a file changes.
#   -DOUT=path.cc -DFILES="a.sql;b.sql"
set(delimiter "schema_sql")
set(body "")
foreach(file IN LISTS FILES)
  get_filename_component(name "${file}" NAME_WE)
  if(NOT name MATCHES "^([0-9][0-9][0-9])_")
    message(FATAL_ERROR "${file}: a schema file's name starts with its three-digit number")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  file(READ "${file}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw string delimiter ${delimiter}")
  endif()
  string(APPEND body "    {${version}, \"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from schema/*.sql by cmake/embed_schema.cmake: do not edit.
#include \"migrate/schema_steps.h\"

namespace room_outbox::relay::migrate {

std::span<const SchemaStep> SchemaSteps() {
  static constexpr SchemaStep kSteps[] = {
${body}  };
  return kSteps;
}

}  // namespace room_outbox::relay::migrate
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
