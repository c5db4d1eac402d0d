# The include roots that keep the dependencies one way: hook -> core <- relay.
#
#   ROOM_OUTBOX_CORE_ROOT   <build>/include_roots/core, holding only a link "core" to core/: what
#                           "core/..." names, and nothing of hook/ or relay/.
#   ROOM_OUTBOX_CORE_FENCE_ROOT, ROOM_OUTBOX_RELAY_FENCE_ROOT
#                           <build>/include_roots/{core,relay}_fence: room_outbox/hook.h and
#                           room_outbox/c.h as headers that stop the build with an #error. Searched
#                           before hook/include by core and by the relay, which may use the public
#                           vocabulary headers (error.h, options.h, envelope.h, export.h) but not
#                           the hook's API.
#
# The hook's own sources (hook/src) are an include root of the hook's targets alone, PRIVATE, so a
# relay source that includes one of them does not find it and fails to build.
set(ROOM_OUTBOX_INCLUDE_ROOTS ${PROJECT_BINARY_DIR}/include_roots)
set(ROOM_OUTBOX_CORE_ROOT ${ROOM_OUTBOX_INCLUDE_ROOTS}/core)
file(MAKE_DIRECTORY ${ROOM_OUTBOX_CORE_ROOT})
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/core ${ROOM_OUTBOX_CORE_ROOT}/core SYMBOLIC)

function(room_outbox_fence_root name who)
  string(TOLOWER "${name}" folder)
  set(root ${ROOM_OUTBOX_INCLUDE_ROOTS}/${folder}_fence)
  foreach(header hook.h c.h)
    file(WRITE ${root}/room_outbox/${header}
      "#error \"${who} must not include room_outbox/${header}: the hook's API is the hook's (see cmake/include_roots.cmake)\"\n")
  endforeach()
  set(ROOM_OUTBOX_${name}_FENCE_ROOT ${root} PARENT_SCOPE)
endfunction()
room_outbox_fence_root(CORE "core")
room_outbox_fence_root(RELAY "the relay")
