//go:build roomoutbox_static

package roomoutbox

// The static link (go build -tags roomoutbox_static): libroom_outbox_hook.a, its C libraries and
// the C++ runtime from their static archives, so the binary needs none of libroom_outbox_hook,
// libmariadb, libcurl, OpenSSL, zlib or libstdc++ at run time (docs/hook.md, "A static binary").
//
// pkg-config gives the include path and the library directory (-L of room_outbox_hook.pc; -L
// applies to every -l wherever it stands), but its libraries come after these flags and as
// shared ones, so the archives are named here, in one group so their order does not matter;
// --as-needed then drops the shared libraries pkg-config adds, whose symbols are already
// resolved. What Debian 12 ships no archive of stays shared: Kerberos (libgssapi_krb5 and the
// libraries it loads) and Cyrus SASL, which Debian's libcurl.a needs for GSSAPI and LDAP;
// p11-kit, which GnuTLS (librtmp, libldap) needs; toml++ (libtomlplusplus.so.3); and glibc. The
// archives come from libmariadb-dev, libcurl4-openssl-dev and the -dev packages of libcurl's own
// dependencies (scripts/deps.sh).

// #cgo pkg-config: room_outbox_hook
// #cgo LDFLAGS: -Wl,--as-needed -Wl,--start-group -l:libroom_outbox_hook.a
// #cgo LDFLAGS: -Wl,-Bstatic -lmariadb -lcurl -lnghttp2 -lrtmp -lssh2 -lpsl -lldap -llber
// #cgo LDFLAGS: -lzstd -lbrotlidec -lbrotlicommon -lgnutls -lhogweed -lnettle -lgmp -ltasn1
// #cgo LDFLAGS: -lidn2 -lunistring -lssl -lcrypto -lz -lstdc++ -Wl,-Bdynamic -Wl,--end-group
// #cgo LDFLAGS: -lgssapi_krb5 -lsasl2 -lp11-kit -ltomlplusplus -static-libgcc -ldl -lm -lpthread
import "C"
