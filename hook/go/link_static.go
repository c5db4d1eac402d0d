//go:build roomoutbox_static

package roomoutbox

// The static link (go build -tags roomoutbox_static): libroom_outbox_hook.a and the C libraries
// from their static archives, so the binary needs none of libroom_outbox_hook, libmariadb,
// libcurl, OpenSSL, zlib or libcurl's own dependencies at run time (docs/hook.md, "A static
// binary").
//
// pkg-config gives the include path and the library directory (-L of room_outbox_hook.pc; -L
// applies to every -l wherever it stands), but its libraries come after these flags and as
// shared ones, so the archives are named here, in one group so their order does not matter;
// --as-needed then drops the shared libraries pkg-config adds, whose symbols are already
// resolved. What Debian 12 ships no archive of stays shared: Kerberos (libgssapi_krb5 and the
// libraries it loads) and Cyrus SASL, which Debian's libcurl.a and libldap.a call; p11-kit, which
// GnuTLS (for librtmp and libldap) calls; toml++ (libtomlplusplus.so.3); and glibc. Since
// libtomlplusplus.so.3 needs the shared C++ runtime, the hook's C++ code uses that one too
// (libstdc++.so.6, libgcc_s.so.1): two C++ runtimes in one process would split its exceptions.
// The archives come from libmariadb-dev, libcurl4-openssl-dev, libssl-dev, zlib1g-dev and the
// -dev packages of libcurl's own dependencies (scripts/deps.sh).

// #cgo pkg-config: room_outbox_hook
// #cgo LDFLAGS: -Wl,--as-needed -Wl,--start-group -l:libroom_outbox_hook.a
// #cgo LDFLAGS: -Wl,-Bstatic -lmariadb -lcurl -lnghttp2 -lrtmp -lssh2 -lpsl -lldap -llber
// #cgo LDFLAGS: -lzstd -lbrotlidec -lbrotlicommon -lgnutls -lhogweed -lnettle -lgmp -ltasn1
// #cgo LDFLAGS: -lidn2 -lunistring -lssl -lcrypto -lz -Wl,-Bdynamic -Wl,--end-group
// #cgo LDFLAGS: -lgssapi_krb5 -lsasl2 -lp11-kit -ltomlplusplus -lstdc++ -ldl -lm -lpthread
import "C"
