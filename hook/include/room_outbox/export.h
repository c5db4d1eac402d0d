/* ROOM_OUTBOX_EXPORT marks the declarations of the hook's public API: the C ABI (c.h) and the C++
 * API (hook.h, options.h, error.h). The library's objects are compiled with
 * -fvisibility=hidden, so libroom_outbox_hook.so.1 exports what carries this macro and nothing
 * else (the core, the publisher and the store stay internal). For a consumer the attribute only
 * repeats the default visibility. Valid C and C++. */
#ifndef ROOM_OUTBOX_EXPORT_H_
#define ROOM_OUTBOX_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define ROOM_OUTBOX_EXPORT __attribute__((visibility("default")))
#else
#define ROOM_OUTBOX_EXPORT
#endif

#endif /* ROOM_OUTBOX_EXPORT_H_ */
