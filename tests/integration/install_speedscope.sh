#!/usr/bin/env bash
# Install speedscope's built web app for the real-browser check (viewer.sh).
# Run by `make deps` when DIR/dist/release/index.html is missing.
#
#   install_speedscope.sh VERSION SHA512 DIR
#
# Fetches the npm package speedscope@VERSION with `npm pack` (the registry's
# tarball, nothing installed, no package scripts run), checks the tarball's
# SHA-512 against SHA512 (hex), and unpacks it as DIR in one rename, so a DIR
# that exists is a whole install.  DIR/dist/release is the app (index.html
# and its assets); DIR/package.json says the version.
set -eu
version=$1 sha512=$2 dir=$3
parent=$(dirname "$dir")
if ! mkdir -p "$parent" 2>/dev/null || [ ! -w "$parent" ]; then
	echo "install_speedscope.sh: cannot write $parent: run make deps as root, or set DEPS_DIR" >&2
	exit 1
fi
# beside DIR: the final mv is a rename on one file system
work=$(mktemp -d "$parent/.speedscope.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! (cd "$work" && npm pack --silent --ignore-scripts \
	"speedscope@$version" >"$work/npm.log" 2>&1); then
	cat "$work/npm.log" >&2
	echo "install_speedscope.sh: npm pack speedscope@$version failed" >&2
	exit 1
fi
tarball=$work/speedscope-$version.tgz
[ -f "$tarball" ] || { echo "install_speedscope.sh: npm pack wrote no $tarball" >&2; exit 1; }
got=$(sha512sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$sha512" ]; then
	echo "install_speedscope.sh: speedscope-$version.tgz has SHA-512 $got, want $sha512" >&2
	exit 1
fi
tar -xzf "$tarball" -C "$work"
[ -f "$work/package/dist/release/index.html" ] ||
	{ echo "install_speedscope.sh: no dist/release/index.html in the package" >&2; exit 1; }
grep -q "\"version\": \"$version\"" "$work/package/package.json" ||
	{ echo "install_speedscope.sh: the package is not version $version" >&2; exit 1; }
chmod -R a+rX "$work/package"
if ! mv -T "$work/package" "$dir" 2>/dev/null && [ ! -f "$dir/dist/release/index.html" ]; then
	echo "install_speedscope.sh: cannot rename the package to $dir (in the way: remove it)" >&2
	exit 1
fi
