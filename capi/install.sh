#!/bin/sh
# Builds dtb's C library and installs it as C libraries are installed (Linux and other ELF
# systems):
#
#   PREFIX/include/dtb.h
#   PREFIX/lib/libdtb.so.X.Y.Z          the shared library, debug info stripped
#   PREFIX/lib/libdtb.so.0.1            its soname (a link), what programs load at run time
#   PREFIX/lib/libdtb.so                a link, what `-ldtb` finds when linking
#   PREFIX/lib/libdtb.a                 the static library, debug info stripped
#   PREFIX/lib/pkgconfig/dtb.pc         for `pkg-config --cflags --libs dtb`
#
# Usage: capi/install.sh --prefix DIR [--libdir DIR] [--destdir DIR] [--from DIR] [--no-strip]
#
#   --prefix DIR   where to install (required; for example /usr/local or $HOME/.local)
#   --libdir DIR   the libraries' directory (default PREFIX/lib)
#   --destdir DIR  stage the files under DIR as packagers do (DIR/PREFIX/...); dtb.pc still
#                  names PREFIX
#   --from DIR     install libdtb.so and libdtb.a already built in DIR instead of building
#                  them (`cargo build --release -p dtb-capi` in this repository by default)
#   --no-strip     keep the debug info
#
# The workspace's release profile keeps line-table debug info (`debug = 1` in Cargo.toml) on
# purpose, for `perf` profiles of the solver and the probes; the copies installed here are
# stripped of it (`strip --strip-debug`, binutils), which takes the shared library from about
# 20 MB to 1.3 MB and the static one from 65 MB to 16 MB. Symbols stay.
set -eu

usage() { # usage STATUS
    sed -n '12,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit "$1"
}
die() {
    echo "install.sh: $*" >&2
    exit 1
}

prefix= libdir= destdir= from= strip=yes
while [ $# -gt 0 ]; do
    case $1 in
    --prefix) [ $# -ge 2 ] || usage 2; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --libdir) [ $# -ge 2 ] || usage 2; libdir=$2; shift 2 ;;
    --libdir=*) libdir=${1#*=}; shift ;;
    --destdir) [ $# -ge 2 ] || usage 2; destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    --from) [ $# -ge 2 ] || usage 2; from=$2; shift 2 ;;
    --from=*) from=${1#*=}; shift ;;
    --no-strip) strip=no; shift ;;
    -h | --help) usage 0 ;;
    *) echo "install.sh: unknown argument: $1" >&2; usage 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix is required" >&2; usage 2; }
case $prefix in
/*) ;;
*) prefix=$(pwd)/$prefix ;;
esac
[ -n "$libdir" ] || libdir=$prefix/lib
case $libdir in
/*) ;;
*) libdir=$(pwd)/$libdir ;;
esac

case $(uname -s) in
Linux | *BSD | DragonFly | SunOS) ;;
*) die "this script installs ELF shared libraries (Linux, the BSDs); on $(uname -s) copy target/release/libdtb.* and capi/include/dtb.h by hand" ;;
esac

capi=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$capi")
# The workspace's version (Cargo.toml, [workspace.package]); the soname is derived from it as
# capi/build.rs derives it.
version=$(sed -n 's/^version = "\([0-9][0-9.]*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || die "no version in $root/Cargo.toml"
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then soname=libdtb.so.0.$minor; else soname=libdtb.so.$major; fi

if [ -z "$from" ]; then
    echo "install.sh: building: cargo build --release -p dtb-capi" >&2
    (cd "$root" && ${CARGO:-cargo} build --release -p dtb-capi) || die "the build failed"
    from=${CARGO_TARGET_DIR:-$root/target}/release
    case $from in
    /*) ;;
    *) from=$root/$from ;;
    esac
fi
[ -f "$from/libdtb.so" ] || die "no libdtb.so in $from (build it with: cargo build --release -p dtb-capi)"
[ -f "$from/libdtb.a" ] || die "no libdtb.a in $from (build it with: cargo build --release -p dtb-capi)"
if command -v readelf >/dev/null 2>&1; then
    built=$(readelf -d "$from/libdtb.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$built" = "$soname" ] || die "$from/libdtb.so has soname '$built', not $soname: rebuild it (cargo build --release -p dtb-capi)"
fi

inc=$destdir$prefix/include
lib=$destdir$libdir
pc=$lib/pkgconfig
mkdir -p "$inc" "$lib" "$pc" || die "cannot create the directories under $destdir$prefix"

# A new file beside the old, then renamed over it: a program running from the old library
# keeps its mapping.
put() { # put SRC DEST MODE [strip]
    cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" || die "cannot write $2"
    if [ "${4:-}" = strip ] && [ "$strip" = yes ]; then
        if command -v strip >/dev/null 2>&1; then
            strip --strip-debug "$2.tmp.$$" || die "strip failed on $2"
        elif command -v objcopy >/dev/null 2>&1; then
            objcopy --strip-debug "$2.tmp.$$" || die "objcopy failed on $2"
        else
            echo "install.sh: no strip or objcopy (binutils): $2 keeps its debug info" >&2
        fi
    fi
    mv -f "$2.tmp.$$" "$2" || die "cannot write $2"
}
link() { # link TARGET NAME
    ln -sf "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2" || die "cannot link $2"
}

put "$capi/include/dtb.h" "$inc/dtb.h" 644
put "$from/libdtb.so" "$lib/libdtb.so.$version" 755 strip
link "libdtb.so.$version" "$lib/$soname"
link "$soname" "$lib/libdtb.so"
put "$from/libdtb.a" "$lib/libdtb.a" 644 strip

# -l flags the static library needs beyond libc (rustc --print native-static-libs on Linux).
cat >"$pc/dtb.pc.tmp.$$" <<EOF || die "cannot write $pc/dtb.pc"
prefix=$prefix
exec_prefix=\${prefix}
libdir=$libdir
includedir=\${prefix}/include

Name: dtb
Description: Draughts endgame tablebases: probe win/loss/draw and distances from C
Version: $version
Libs: -L\${libdir} -ldtb
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl
Cflags: -I\${includedir}
EOF
mv -f "$pc/dtb.pc.tmp.$$" "$pc/dtb.pc" || die "cannot write $pc/dtb.pc"

cat >&2 <<EOF
install.sh: installed dtb $version under $destdir$prefix:
  $inc/dtb.h
  $lib/libdtb.so.$version (soname $soname), libdtb.so, libdtb.a
  $pc/dtb.pc
Compile and link a program:
  cc prog.c \$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs dtb) -Wl,-rpath,$libdir
EOF
