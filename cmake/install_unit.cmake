# Run at install time (install(SCRIPT)): copies a systemd unit of systemd/ into
# $DESTDIR<prefix>/<datadir>/room-outbox/systemd/ (or $DESTDIR<ROOM_OUTBOX_UNIT_DIR> when set)
# with its ExecStart pointing at the binary of the prefix being installed to (cmake --install
# --prefix P sets CMAKE_INSTALL_PREFIX here), not at the prefix the build was configured with.
# The source units name /usr/local/bin.
if(ROOM_OUTBOX_UNIT_DIR)
  set(dest "$ENV{DESTDIR}${ROOM_OUTBOX_UNIT_DIR}")
else()
  set(dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${ROOM_OUTBOX_DATADIR}/room-outbox/systemd")
endif()
foreach(unit IN LISTS ROOM_OUTBOX_UNITS)
  file(READ "${ROOM_OUTBOX_SOURCE_DIR}/systemd/${unit}" text)
  string(REPLACE "/usr/local/bin/" "${CMAKE_INSTALL_PREFIX}/${ROOM_OUTBOX_BINDIR}/" text "${text}")
  file(MAKE_DIRECTORY "${dest}")
  message(STATUS "Installing: ${dest}/${unit}")
  file(WRITE "${dest}/${unit}" "${text}")
endforeach()
