# Run at install time (install(SCRIPT)): copies a systemd unit of systemd/ into
# $DESTDIR<prefix>/<datadir>/room-outbox/systemd/ with its ExecStart pointing at the binary of
# the prefix being installed to (cmake --install --prefix P sets CMAKE_INSTALL_PREFIX here), not
# at the prefix the build was configured with. The source units name /usr/local/bin.
foreach(unit IN LISTS ROOM_OUTBOX_UNITS)
  file(READ "${ROOM_OUTBOX_SOURCE_DIR}/systemd/${unit}" text)
  string(REPLACE "/usr/local/bin/" "${CMAKE_INSTALL_PREFIX}/${ROOM_OUTBOX_BINDIR}/" text "${text}")
  set(dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${ROOM_OUTBOX_DATADIR}/room-outbox/systemd")
  file(MAKE_DIRECTORY "${dest}")
  message(STATUS "Installing: ${dest}/${unit}")
  file(WRITE "${dest}/${unit}" "${text}")
endforeach()
