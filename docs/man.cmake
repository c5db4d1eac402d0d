# Man pages outbox-relay(8) and outbox-relay.toml(5): docs/*.adoc (also the readable docs) are
# rendered by asciidoctor at build time into man/man<N>/ of the build tree, with the paths of
# this build's install prefix and unit directory filled in, and installed to share/man. Without
# asciidoctor the configure step fails: a build never silently ships without its man pages.
find_program(ROOM_OUTBOX_ASCIIDOCTOR asciidoctor)
if(NOT ROOM_OUTBOX_ASCIIDOCTOR)
  message(FATAL_ERROR "asciidoctor not found: it renders the man pages from docs/*.adoc. "
    "Install the Debian package asciidoctor (make deps does).")
endif()

if(ROOM_OUTBOX_SYSTEMD_UNIT_DIR)
  set(room_outbox_man_unitdir "${ROOM_OUTBOX_SYSTEMD_UNIT_DIR}")
else()
  set(room_outbox_man_unitdir "${CMAKE_INSTALL_FULL_DATADIR}/room-outbox/systemd")
endif()

set(ROOM_OUTBOX_MAN_PAGES outbox-relay.8 outbox-relay.toml.5)
set(ROOM_OUTBOX_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(room_outbox_man_outputs)
foreach(page IN LISTS ROOM_OUTBOX_MAN_PAGES)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${page}")
  set(out ${ROOM_OUTBOX_MAN_DIR}/man${section}/${page})
  add_custom_command(OUTPUT ${out}
    COMMAND ${ROOM_OUTBOX_ASCIIDOCTOR} --backend manpage --failure-level WARN
      --attribute "mansource=room-outbox ${PROJECT_VERSION}"
      --attribute "datadir=${CMAKE_INSTALL_FULL_DATADIR}"
      --attribute "unitdir=${room_outbox_man_unitdir}"
      --out-file ${out} ${PROJECT_SOURCE_DIR}/docs/${page}.adoc
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/${page}.adoc
    COMMENT "Rendering man page ${page}"
    VERBATIM)
  list(APPEND room_outbox_man_outputs ${out})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
add_custom_target(man_pages ALL DEPENDS ${room_outbox_man_outputs})

if(NOT ROOM_OUTBOX_BUILD_TESTS)
  return()
endif()
# The pages say every option, command and config key the code has, and nothing else.
target_sources(unit_tests PRIVATE tests/unit/man_page_test.cc tests/support/adoc_outline.cc
  tests/support/man_page_drift.cc)
target_link_libraries(unit_tests PRIVATE CLI11::CLI11)
# The groff checks below read the rendered pages.
add_dependencies(unit_tests man_pages)
# The units' tests (systemd-analyze verify) look their Documentation= pages up in man/.
add_dependencies(integration_tests man_pages)
# groff renders each page without a warning (-ww: all of them), as lintian's groff check does.
foreach(page IN LISTS ROOM_OUTBOX_MAN_PAGES)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${page}")
  add_test(NAME ManPage.GroffWarnsNothing.${page}
    COMMAND groff -man -ww -z -Tutf8 ${ROOM_OUTBOX_MAN_DIR}/man${section}/${page})
  set_tests_properties(ManPage.GroffWarnsNothing.${page} PROPERTIES
    LABELS unit FAIL_REGULAR_EXPRESSION "[^ \t\r\n]")
endforeach()
